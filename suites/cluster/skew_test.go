package cluster_test

import (
	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/capability"
	. "github.com/onsi/ginkgo/v2"
)

// SKEW-1: a kubelet up to three minors older than the API server runs
// ephemeral containers. The cluster suite's kubelet-facing specs
// (targeting, namespaces, lifecycle and side effects, streaming) run here
// once per kubelet release of versions.yaml's skewKubelets, on pods placed
// on the node that runs it; each release's observations go to its own
// matrix column (capability.KubeletLayer). On a cluster without such a
// node (any but -topology=skew; skew-pair has N and N-1) the entry skips
// saying so.
var _ = Describe("Version skew: the kubelet-facing specs on every kubelet release [SKEW-1]", framework.Label(framework.LabelCluster, framework.LabelSkew), func() {
	Context("targeting", framework.Label(framework.LabelPID, framework.LabelLinuxOnly), func() {
		for _, m := range pidModes {
			onEveryKubelet(pidViewText+": "+m.text, func(ctx SpecContext, at placement) { pidView(ctx, at, m) }, framework.Label(string(m.n)))
		}
		for _, t := range hostPIDTargets {
			onEveryKubelet(hostPIDText+": "+t.text, func(ctx SpecContext, at placement) { hostPIDView(ctx, at, t.target) }, framework.Label(string(capability.PIDNode)))
		}
	})
	Context("namespaces", func() {
		onEveryKubelet(netPodText, netPod, netPodLabels)
		onEveryKubelet(ipcPodText, ipcPod, ipcPodLabels)
		onEveryKubelet(procRootFSText, procRootFS, procRootFSLabels)
	})
	Context("lifecycle and side effects", framework.Label(framework.LabelLifecycle), func() {
		onEveryKubelet(lifecycleStatusText, lifecycleStatus, framework.Label(string(capability.Logs)))
		onEveryKubelet(lifecyclePullFailText, lifecyclePullFailure)
		for _, policy := range restartPolicies {
			onEveryKubelet(lifecycleRestartText+": restartPolicy "+string(policy), func(ctx SpecContext, at placement) { lifecycleNeverRestarted(ctx, at, policy) })
		}
		onEveryKubelet(lifecycleSideEffectsText, lifecycleSideEffects, framework.Label(string(capability.NoSideEffects)))
		onEveryKubelet(lifecyclePullText, lifecyclePullAtDebugTime, framework.Label(string(capability.PullAtDebugTime)))
	})
	// Features of newer kubelets: on an older one the spec says "not
	// applicable" with the release (framework.MinimumKubeletVersion).
	Context("newer pod features", func() {
		onEveryKubelet(usernsPodText, usernsPod, usernsPodLabels)
		onEveryKubelet(sidecarTargetText, sidecarTarget, sidecarTargetLabels)
		onEveryKubelet(observedGenerationText, observedGeneration, observedGenerationLabels)
	})
	Context("streaming", framework.Label(framework.LabelStreaming), func() {
		onEveryKubelet(streamExecText, streamExec, framework.Label(string(capability.Exec)))
		onEveryKubelet(streamAttachText, streamAttach, framework.Label(string(capability.Attach)))
	})
})

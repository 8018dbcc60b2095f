package cluster_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type auditEvent struct {
	Verb         string                     `json:"verb"`
	Stage        string                     `json:"stage"`
	User         struct{ Username string }  `json:"user"`
	Impersonated *struct{ Username string } `json:"impersonatedUser"`
	ObjectRef    struct {
		Namespace, Name, Subresource, Resource string
	} `json:"objectRef"`
	ResponseStatus struct{ Code int } `json:"responseStatus"`
}

var _ = Describe("Auditing of the subresource", framework.Label(framework.LabelCluster, framework.LabelSecurity, framework.LabelAPIRelease), func() {
	It("update and patch calls to pods/ephemeralcontainers are in the audit log with the requesting user and the answer [SEC-4]", func(ctx SpecContext) {
		if env.AuditLog == "" {
			Skip("the audit log of a cluster given by -kubeconfig is not readable by the suite")
		}
		f := newFramework(ctx)
		pod, err := f.CreatePod(ctx, targetPod(f))
		Expect(err).NotTo(HaveOccurred())
		user := kube.ImpersonatedAudited
		grant(ctx, f, userSubject(user), "", rule("pods", "get"), rule("pods/ephemeralcontainers", "update", "patch"))
		as := f.Impersonate(user)
		_, err = f.AddEphemeral(ctx, as, pod.Name, f.DebugContainer("updated", ""))
		Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
		patch := `{"spec":{"ephemeralContainers":[` + mustJSON(f.DebugContainer("patched", "")) + `]}}`
		_, err = as.CoreV1().Pods(f.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "ephemeralcontainers")
		Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
		// One line per completed call on the subresource in this namespace.
		calls := func() ([]string, error) {
			file, err := os.Open(env.AuditLog)
			if err != nil {
				return nil, err
			}
			defer file.Close()
			var out []string
			s := bufio.NewScanner(file)
			s.Buffer(make([]byte, 1<<20), 1<<24)
			for s.Scan() {
				var e auditEvent
				if json.Unmarshal(s.Bytes(), &e) != nil {
					continue
				}
				if e.ObjectRef.Subresource == "ephemeralcontainers" && e.ObjectRef.Namespace == f.Namespace && e.Stage == "ResponseComplete" {
					who := e.User.Username
					if e.Impersonated != nil {
						who = e.Impersonated.Username
					}
					out = append(out, fmt.Sprintf("%s pods/%s/ephemeralcontainers by %s: %d", e.Verb, e.ObjectRef.Name, who, e.ResponseStatus.Code))
				}
			}
			return out, s.Err()
		}
		Eventually(ctx, calls).WithTimeout(f.Timeouts.ContainerReady).WithPolling(f.Timeouts.Poll*5).Should(ContainElements(
			fmt.Sprintf("update pods/%s/ephemeralcontainers by %s: 200", pod.Name, user),
			fmt.Sprintf("patch pods/%s/ephemeralcontainers by %s: 200", pod.Name, user),
		), "audit log %s", env.AuditLog)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

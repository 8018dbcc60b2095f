package cluster_test

import (
	"bufio"
	"encoding/json"
	"os"

	"github.com/ectest/ectest/framework"
	"github.com/ectest/ectest/framework/kube"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
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

var _ = Describe("Auditing of the subresource", framework.Label(framework.LabelCluster, framework.LabelSecurity), func() {
	It("calls to pods/ephemeralcontainers are in the audit log with the requesting user [SEC-4]", func(ctx SpecContext) {
		if env.AuditLog == "" {
			Skip("the audit log of a cluster given by -kubeconfig is not readable by the suite")
		}
		f := newFramework(ctx)
		pod, err := f.CreatePod(ctx, targetPod(f))
		Expect(err).NotTo(HaveOccurred())
		user := "ectest-audited-" + f.Token
		grant(ctx, f, user, "", rule("pods", "get"), rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/ephemeralcontainers"}, Verbs: []string{"update"}})
		_, err = f.AddEphemeral(ctx, f.Impersonate(user), pod.Name, f.DebugContainer("debugger", ""))
		Expect(err).NotTo(HaveOccurred(), kube.Rejection(err))
		Eventually(ctx, func() (*auditEvent, error) {
			file, err := os.Open(env.AuditLog)
			if err != nil {
				return nil, err
			}
			defer file.Close()
			s := bufio.NewScanner(file)
			s.Buffer(make([]byte, 1<<20), 1<<24)
			for s.Scan() {
				var e auditEvent
				if json.Unmarshal(s.Bytes(), &e) != nil {
					continue
				}
				if e.ObjectRef.Subresource == "ephemeralcontainers" && e.ObjectRef.Namespace == f.Namespace && e.Stage == "ResponseComplete" {
					return &e, nil
				}
			}
			return nil, nil
		}).WithTimeout(f.Timeouts.ContainerReady).WithPolling(f.Timeouts.Poll*5).Should(SatisfyAll(
			Not(BeNil()),
			WithTransform(func(e *auditEvent) string { return e.Verb }, Equal("update")),
			WithTransform(func(e *auditEvent) string {
				if e.Impersonated != nil {
					return e.Impersonated.Username
				}
				return e.User.Username
			}, Equal(user)),
		), "audit log %s", env.AuditLog)
	}, SpecTimeout(framework.DefaultTimeouts.Spec))
})

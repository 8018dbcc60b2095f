package kube

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// fakeServer answers the few calls these tests make the way API servers do:
// subKind is the subresource's kind in discovery and in its answers ("" for
// a server that does not serve it).
func fakeServer(t *testing.T, subKind string) kubernetes.Interface {
	t.Helper()
	write := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	notFound := func(w http.ResponseWriter, details *metav1.StatusDetails, msg string) {
		write(w, 404, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Reason: metav1.StatusReasonNotFound, Code: 404, Details: details, Message: msg})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1":
			list := metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods", Namespaced: true, Kind: "Pod", Verbs: []string{"get", "patch"}}}}
			if subKind != "" {
				list.APIResources = append(list.APIResources, metav1.APIResource{Name: Subresource, Namespaced: true, Kind: subKind, Verbs: []string{"get", "patch", "update"}})
			}
			write(w, 200, &list)
		case r.URL.Path == "/api/v1/namespaces/ns/pods/gone/ephemeralcontainers" && subKind != "":
			notFound(w, &metav1.StatusDetails{Name: "gone", Kind: "pods"}, `pods "gone" not found`)
		case r.URL.Path == "/api/v1/namespaces/ns/pods/p/ephemeralcontainers" && subKind == "Pod":
			write(w, 200, &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}})
		case r.URL.Path == "/api/v1/namespaces/ns/pods/p/ephemeralcontainers" && subKind == LegacyKind:
			write(w, 200, map[string]any{"kind": LegacyKind, "apiVersion": "v1", "metadata": map[string]any{"name": "p", "namespace": "ns"}, "ephemeralContainers": []any{}})
		default:
			// The generic 404 of a path the server does not serve.
			notFound(w, &metav1.StatusDetails{}, "the server could not find the requested resource")
		}
	}))
	t.Cleanup(srv.Close)
	c, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func patch(c kubernetes.Interface, pod string) error {
	_, err := c.CoreV1().Pods("ns").Patch(context.Background(), pod, types.StrategicMergePatchType, []byte(`{"spec":{"ephemeralContainers":[{"name":"d","image":"x"}]}}`), metav1.PatchOptions{}, "ephemeralcontainers")
	return ClassifyEphemeralError(err)
}

func TestEphemeralAPIDetection(t *testing.T) {
	for _, tc := range []struct {
		name, subKind  string
		unsupported    string // substring of Unsupported(), "" for none
		patchErr       error  // what patching pod p classifies as
		patchSucceeds  bool
		missingPodIsNF bool // patching a missing pod is the pod's 404, not "not served"
	}{
		{name: "1.22+ server", subKind: "Pod", patchSucceeds: true, missingPodIsNF: true},
		{name: "no subresource", subKind: "", unsupported: "does not list", patchErr: ErrNotServed},
		{name: "pre-1.22 server", subKind: LegacyKind, unsupported: "before Kubernetes 1.22", patchErr: ErrLegacyKind, missingPodIsNF: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeServer(t, tc.subKind)
			api, err := DiscoverEphemeralAPI(c.Discovery())
			if err != nil {
				t.Fatal(err)
			}
			if got := api.Unsupported(); (tc.unsupported == "") != (got == "") || !strings.Contains(got, tc.unsupported) {
				t.Errorf("Unsupported() = %q, want containing %q", got, tc.unsupported)
			}
			err = patch(c, "p")
			if tc.patchSucceeds {
				if err != nil {
					t.Errorf("patch: %v", err)
				}
			} else if !errors.Is(err, tc.patchErr) {
				t.Errorf("patch: %v, want errors.Is %v", err, tc.patchErr)
			}
			if tc.patchErr == ErrNotServed && !apierrors.IsNotFound(err) {
				t.Errorf("the classified error lost the server's status: %v", err)
			}
			if tc.missingPodIsNF {
				err := patch(c, "gone")
				if errors.Is(err, ErrNotServed) || !apierrors.IsNotFound(err) {
					t.Errorf("a missing pod's 404 (details.name set) must stay a plain NotFound, got %v", err)
				}
			}
		})
	}
}

func TestClassifyLeavesOtherErrors(t *testing.T) {
	if ClassifyEphemeralError(nil) != nil {
		t.Error("nil")
	}
	plain := errors.New("connection refused")
	if ClassifyEphemeralError(plain) != plain {
		t.Error("a transport error must pass unchanged")
	}
	invalid := apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), "p", nil)
	if errors.Is(ClassifyEphemeralError(invalid), ErrNotServed) {
		t.Error("an Invalid error is not 'not served'")
	}
}

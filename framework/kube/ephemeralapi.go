package kube

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
)

// What a client must do about servers that lack ephemeral containers or
// speak their pre-1.22 API (SKEW-2), as kubectl debug does it
// (k8s.io/kubectl pkg/cmd/debug/debug.go, debugByEphemeralContainer):
//
//   - a 404 for the subresource itself means ephemeral containers are
//     disabled or not served ("ephemeral containers are disabled for this
//     cluster"). The API server's 404 for a path it does not serve carries
//     a Status without details.name; the 404 of a missing pod names the pod,
//     so the two are told apart by details.name.
//   - a server before 1.22 serves the subresource with the kind
//     EphemeralContainers, removed from k8s.io/api in 1.22: its answers do
//     not decode into a Pod (runtime.IsNotRegisteredError on the client's
//     side). kubectl 1.23 to 1.26 fell back to a JSON patch of that kind
//     (debugByEphemeralContainerLegacy); kubectl from 1.27 has no fallback.
//     The suite judges the 1.22+ API only, so it reports such a server as
//     unsupported instead of judging it.
//
// Discovery says both before any write: the core/v1 resource list names
// pods/ephemeralcontainers, with the subresource's kind (Pod from 1.22,
// EphemeralContainers before), or does not list it.

// Subresource is the name discovery lists the subresource under.
const Subresource = "pods/ephemeralcontainers"

// LegacyKind is the subresource's kind before Kubernetes 1.22.
const LegacyKind = "EphemeralContainers"

var (
	// ErrNotServed: the API server does not serve pods/ephemeralcontainers
	// (a 404 for the subresource, not for the pod).
	ErrNotServed = errors.New("the API server does not serve pods/ephemeralcontainers (ephemeral containers disabled or not served)")
	// ErrLegacyKind: the API server answered with the pre-1.22
	// EphemeralContainers kind, which this client cannot decode.
	ErrLegacyKind = errors.New("the API server speaks the pre-1.22 pods/ephemeralcontainers API (kind EphemeralContainers)")
)

// EphemeralAPI is how an API server serves ephemeral containers, as its
// discovery document says.
type EphemeralAPI struct {
	// Served: core/v1 lists pods/ephemeralcontainers.
	Served bool `json:"served"`
	// Kind is the subresource's kind: Pod from Kubernetes 1.22 on,
	// EphemeralContainers before.
	Kind  string   `json:"kind,omitempty"`
	Verbs []string `json:"verbs,omitempty"`
}

// DiscoverEphemeralAPI reads the core/v1 resource list of the server.
func DiscoverEphemeralAPI(d discovery.DiscoveryInterface) (EphemeralAPI, error) {
	list, err := d.ServerResourcesForGroupVersion("v1")
	if err != nil {
		return EphemeralAPI{}, fmt.Errorf("discovery of core/v1: %w", err)
	}
	for _, r := range list.APIResources {
		if r.Name == Subresource {
			return EphemeralAPI{Served: true, Kind: r.Kind, Verbs: slices.Clone(r.Verbs)}, nil
		}
	}
	return EphemeralAPI{}, nil
}

// Unsupported says why the suite cannot judge ephemeral containers through
// this server's API ("" when it can): the subresource is not served, is
// served with the legacy kind, or lacks a verb the specs use.
func (a EphemeralAPI) Unsupported() string {
	switch {
	case !a.Served:
		return "the API server's discovery does not list " + Subresource + ": ephemeral containers are disabled or not served by this server (no verdict: the specs judge a server that serves them)"
	case a.Kind == LegacyKind:
		return "the API server serves " + Subresource + " with the kind " + LegacyKind + ", the API before Kubernetes 1.22 (no verdict: the specs judge the 1.22+ API, whose kind is Pod)"
	case a.Kind != "Pod":
		return fmt.Sprintf("the API server serves %s with the kind %q, neither Pod (1.22+) nor %s (before 1.22)", Subresource, a.Kind, LegacyKind)
	}
	for _, v := range []string{"get", "patch", "update"} {
		if !slices.Contains(a.Verbs, v) {
			return fmt.Sprintf("the API server's discovery lists %s without the verb %s (verbs: %s)", Subresource, v, strings.Join(a.Verbs, ", "))
		}
	}
	return ""
}

func (a EphemeralAPI) String() string {
	if !a.Served {
		return Subresource + " not served"
	}
	return fmt.Sprintf("%s served, kind %s, verbs %s", Subresource, a.Kind, strings.Join(a.Verbs, ","))
}

// classifiedError is an error of a call on the subresource that a client
// must read as ErrNotServed or ErrLegacyKind; the server's answer stays
// reachable (errors.As finds its StatusError).
type classifiedError struct {
	kind, err error
}

func (e *classifiedError) Error() string   { return e.kind.Error() + ": " + e.err.Error() }
func (e *classifiedError) Unwrap() []error { return []error{e.kind, e.err} }

// ClassifyEphemeralError reads the error of a call on the subresource:
// errors.Is(result, ErrNotServed) for the server's 404 of the subresource
// (a Status with reason NotFound and no details.name, as kubectl debug
// tells it from a missing pod), errors.Is(result, ErrLegacyKind) for an
// answer of the kind EphemeralContainers, which the client's scheme does not
// have registered; any other error is returned as it is.
func ClassifyEphemeralError(err error) error {
	if err == nil {
		return nil
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) && se.ErrStatus.Reason == metav1.StatusReasonNotFound && (se.ErrStatus.Details == nil || se.ErrStatus.Details.Name == "") {
		return &classifiedError{ErrNotServed, err}
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if runtime.IsNotRegisteredError(e) && strings.Contains(e.Error(), `"`+LegacyKind+`"`) {
			return &classifiedError{ErrLegacyKind, err}
		}
	}
	return err
}

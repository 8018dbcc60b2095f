package cri

import (
	"context"
	"fmt"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The conditions every CRI runtime must report in its Status (the CRI's
// RuntimeCondition comment): the kubelet keeps a node NotReady until both
// are true, and the suite judges nothing of a runtime that is not ready.
const (
	ConditionRuntimeReady = runtimeapi.RuntimeReady
	ConditionNetworkReady = runtimeapi.NetworkReady
)

// NotReadyError says the runtime's own Status reports it not ready: an
// error of the environment, never a verdict on the runtime's namespaces.
type NotReadyError struct {
	// Conditions are the required conditions that are false or absent,
	// each as "NetworkReady=false (Reason: message)".
	Conditions []string
}

func (e *NotReadyError) Error() string {
	return "the runtime is not ready: " + strings.Join(e.Conditions, "; ")
}

// Readiness asks the runtime for its Status and returns a *NotReadyError
// when RuntimeReady or NetworkReady is false or absent (absent counts as
// not ready, as the kubelet counts it); any other error is the call's.
func Readiness(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	resp, err := rt.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return fmt.Errorf("Status: %s", StatusText(err))
	}
	return NotReady(resp.GetStatus())
}

// NotReady is Readiness's judgement of a Status answer.
func NotReady(st *runtimeapi.RuntimeStatus) error {
	var bad []string
	for _, want := range []string{ConditionRuntimeReady, ConditionNetworkReady} {
		var found *runtimeapi.RuntimeCondition
		for _, c := range st.GetConditions() {
			if c.GetType() == want {
				found = c
				break
			}
		}
		switch {
		case found == nil:
			bad = append(bad, want+" absent from the runtime's Status")
		case !found.GetStatus():
			why := strings.Trim(strings.TrimSpace(found.GetReason())+": "+strings.TrimSpace(found.GetMessage()), ": ")
			if why == "" {
				why = "no reason given"
			}
			bad = append(bad, fmt.Sprintf("%s=false (%s)", want, why))
		}
	}
	if len(bad) > 0 {
		return &NotReadyError{Conditions: bad}
	}
	return nil
}

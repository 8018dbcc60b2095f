package cri

import (
	"fmt"
	"strings"

	"github.com/ectest/ectest/framework/capability"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// StatusText renders a gRPC error as "Code: message", the evidence a vendor needs.
func StatusText(err error) string {
	if err == nil {
		return "OK"
	}
	if s, ok := status.FromError(err); ok {
		return fmt.Sprintf("%s: %s", s.Code(), s.Message())
	}
	return err.Error()
}

func isNotFound(err error) bool {
	s, ok := status.FromError(err)
	return ok && s.Code() == codes.NotFound
}

// RefusalCodes are the gRPC codes that count as a runtime refusing a
// request the CRI says it must reject (an unknown namespace mode, a
// target_id naming no container of the sandbox, a mode it does not
// implement). The CRI prescribes no code ("it must return an error"), and
// the kubelet turns any CreateContainer error into CreateContainerError
// and never runs the container, so every code that speaks of the request
// counts: InvalidArgument, NotFound, FailedPrecondition (a target that is
// not running), OutOfRange, Unimplemented, and Unknown (what gRPC gives a
// plain Go error, and what containerd answers for most of its validation
// errors). Codes that speak of the runtime or the transport instead
// (Unavailable, DeadlineExceeded, Canceled, ResourceExhausted, Aborted,
// Internal, DataLoss, Unauthenticated, PermissionDenied, AlreadyExists) do
// not: a client cannot tell them from an outage, and retries them.
var RefusalCodes = map[codes.Code]bool{
	codes.InvalidArgument:    true,
	codes.NotFound:           true,
	codes.FailedPrecondition: true,
	codes.OutOfRange:         true,
	codes.Unimplemented:      true,
	codes.Unknown:            true,
}

// JudgeRefusal judges how a runtime answered a request it must refuse.
// created says the create call (CreateContainer) had succeeded and err
// came from StartContainer; for RunPodSandbox, which creates and starts in
// one call, it is false. A refusal counts only at the create call and with
// one of RefusalCodes; anything else is its own observation, and a
// deviation. Unknown is also what any plain error of a runtime failing for
// its own reasons becomes, so it counts only with evidence that the
// request itself was refused: its message names the request (about: the
// target_id, the mode's value) or speaks of a target, a namespace or a
// mode (RefusalTerms).
func JudgeRefusal(created bool, err error, about ...string) (capability.Outcome, string) {
	if err == nil {
		return capability.Deviated, "accepted"
	}
	code := status.Code(err)
	switch {
	case created:
		return capability.Deviated, fmt.Sprintf("accepted at CreateContainer, then failed at StartContainer with %s", code)
	case !RefusalCodes[code]:
		return capability.Deviated, fmt.Sprintf("failed with %s, a code of the runtime or transport, not a refusal of the request", code)
	case code == codes.Unknown && !speaksOfRequest(status.Convert(err).Message(), about):
		return capability.Deviated, "failed with Unknown, and the message speaks neither of the request's values nor of a target, namespace or mode: a runtime failing for its own reasons, not a refusal of the request"
	}
	return capability.Works, "rejected: " + code.String()
}

// RefusalTerms are words by which a refusal's message speaks of a
// namespace request (matched without case).
var RefusalTerms = []string{"target", "namespace", "mode"}

func speaksOfRequest(message string, about []string) bool {
	m := strings.ToLower(message)
	for _, t := range append(append([]string(nil), RefusalTerms...), about...) {
		if t != "" && strings.Contains(m, strings.ToLower(t)) {
			return true
		}
	}
	return false
}

// RefusalObservation records that a runtime answered a request of
// capability n with err: "refused" when it is a refusal at create with a
// refusal code (what a runtime that does not implement a mode must do),
// deviated otherwise (see JudgeRefusal).
func RefusalObservation(n capability.Name, created bool, err error, about ...string) capability.Observation {
	obs := capability.Observation{Capability: n, Outcome: capability.Refused, Observed: "refused: " + StatusText(err), Evidence: StatusText(err)}
	if outcome, observed := JudgeRefusal(created, err, about...); outcome != capability.Works {
		obs.Outcome, obs.Observed = outcome, observed
	}
	return obs
}

package kube

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Rejection describes an API error as evidence: status code, reason,
// message and every field cause.
func Rejection(err error) string {
	if err == nil {
		return "accepted (no error)"
	}
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		return err.Error()
	}
	st := se.ErrStatus
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: %s", st.Code, st.Reason, st.Message)
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			fmt.Fprintf(&b, "\n  cause %s %s: %s", c.Type, c.Field, c.Message)
		}
	}
	return b.String()
}

// HasCause reports whether err is an Invalid error with a cause on a field
// containing field and a message containing msg.
func HasCause(err error, field, msg string) bool {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil {
		return false
	}
	for _, c := range se.ErrStatus.Details.Causes {
		if strings.Contains(c.Field, field) && strings.Contains(c.Message, msg) {
			return true
		}
	}
	return false
}

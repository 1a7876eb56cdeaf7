package apperr_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/authcore/authcore/platform/apperr"
)

func TestCopiesLeaveTheOriginalAlone(t *testing.T) {
	base := apperr.BadRequest("x", "y")
	with := base.With("engine", "authcore").WithHeader("Retry-After", "1")
	if base.Fields != nil || base.Headers != nil {
		t.Fatal("With changed the shared error")
	}
	if with.Fields["engine"] != "authcore" || with.Headers["Retry-After"] != "1" || with.Kind != apperr.KindInvalid {
		t.Fatalf("%+v", with)
	}
	if with.With("a", 1).Fields["engine"] != "authcore" {
		t.Fatal("With dropped a field")
	}
}

func TestWrapKeepsTheCauseForErrorsIs(t *testing.T) {
	cause := errors.New("disk on fire")
	err := fmt.Errorf("outer: %w", apperr.NotFound("gone").Wrap(cause))
	if !errors.Is(err, cause) {
		t.Fatal("cause lost")
	}
	e, ok := apperr.As(err)
	if !ok || e.Code != "not_found" || !apperr.IsKind(err, apperr.KindNotFound) || apperr.IsKind(err, apperr.KindInvalid) {
		t.Fatalf("%v", e)
	}
	if _, ok := apperr.As(cause); ok {
		t.Fatal("a plain error is not an *Error")
	}
}

func TestValidationListsEveryIssue(t *testing.T) {
	e := apperr.Validation(apperr.NotAnObject, apperr.Issue{Field: "name", Reason: "is required"})
	issues, _ := e.Fields["issues"].([]apperr.Issue)
	if e.Code != "validation_failed" || e.Message != "invalid request body" || len(issues) != 2 || issues[1].Field != "name" {
		t.Fatalf("%+v", e)
	}
}

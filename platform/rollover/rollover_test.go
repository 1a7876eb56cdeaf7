package rollover

import (
	"errors"
	"testing"
	"time"
)

func TestGrace(t *testing.T) {
	for body, want := range map[string]time.Duration{
		``: 24 * time.Hour, ` `: 24 * time.Hour, `{}`: 24 * time.Hour, `{"graceHours":0}`: 0,
		`{"graceHours":168}`: 168 * time.Hour, `{"graceHours":0.5}`: 30 * time.Minute, `{"other":1}`: 24 * time.Hour,
	} {
		if got, notObject, err := Grace([]byte(body)); got != want || notObject || err != nil {
			t.Errorf("%q: %v %v %v, want %v", body, got, notObject, err, want)
		}
	}
	for _, body := range []string{`{"graceHours":-0.01}`, `{"graceHours":168.01}`, `{"graceHours":null}`, `{"graceHours":"1"}`, `{"graceHours":[]}`} {
		if _, _, err := Grace([]byte(body)); !errors.Is(err, ErrGrace) {
			t.Errorf("%q: %v, want ErrGrace", body, err)
		}
	}
	for _, body := range []string{`[]`, `nope`, `null`} {
		if g, notObject, err := Grace([]byte(body)); !notObject || err != nil || g != 24*time.Hour {
			t.Errorf("%q: %v %v %v, want notObject with the default", body, g, notObject, err)
		}
	}
}

func TestUntil(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 500, time.UTC)
	if u, ok := Until(now, time.Hour, nil); !ok || !u.Equal(now.Add(time.Hour).Truncate(time.Second)) {
		t.Errorf("no expiry: %v %v", u, ok)
	}
	exp := now.Add(time.Minute)
	if u, ok := Until(now, time.Hour, &exp); !ok || !u.Equal(exp) {
		t.Errorf("capped by expiry: %v %v", u, ok)
	}
	if _, ok := Until(now, 0, nil); ok {
		t.Error("a zero grace keeps nothing")
	}
}

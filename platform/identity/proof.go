package identity

import (
	"strings"

	"github.com/authcore/authcore/platform/jsonbody"
)

// ReadProof reads the second factor of SPEC §17's bodies, { code | recoveryCode |
// assertion }: exactly one, a code of six digits, an assertion a WebAuthn credential
// object. Both the sign-in's second step and a step-up read it here.
func ReadProof(f *jsonbody.Fields) Proof {
	var p Proof
	n := 0
	switch s, st := f.String("code"); st {
	case jsonbody.OK:
		if len(s) != 6 || strings.Trim(s, "0123456789") != "" {
			f.Fail("code", "must be 6 digits")
		}
		p.Code, n = s, n+1
	case jsonbody.WrongType:
		f.Fail("code", "must be a string of 6 digits")
	}
	switch s, st := f.String("recoveryCode"); st {
	case jsonbody.OK:
		if s == "" || len(s) > 64 {
			f.Fail("recoveryCode", "must be a recovery code")
		}
		p.RecoveryCode, n = s, n+1
	case jsonbody.WrongType:
		f.Fail("recoveryCode", "must be a string")
	}
	switch r, st := f.RawObject("assertion"); st {
	case jsonbody.OK:
		p.Assertion, n = r, n+1
	case jsonbody.WrongType:
		f.Fail("assertion", "must be a WebAuthn credential object")
	}
	if n != 1 {
		f.Fail("body", "give exactly one of code, recoveryCode and assertion")
	}
	return p
}

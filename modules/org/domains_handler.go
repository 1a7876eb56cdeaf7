package org

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/authcore/authcore/platform/guard"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/jsonbody"
)

func (h handler) claimDomain(c *fiber.Ctx) error {
	f := jsonbody.Read(c.Body())
	refuseUnknown(f, domainFields, "a domain claim")
	domain, st := f.String("domain")
	switch {
	case st == jsonbody.WrongType:
		f.Fail("domain", "must be a string")
	case st != jsonbody.OK:
		f.Fail("domain", "required string")
	default:
		if why := checkDomain(domain); why != "" {
			f.Fail("domain", why)
		}
	}
	method, mst := f.String("method")
	if mst != jsonbody.OK || (method != methodEmail && method != methodDNS) {
		f.Fail("method", "required: email or dns")
	}
	email, est := f.String("email")
	switch {
	case method == methodEmail && est == jsonbody.OK:
		addr, ok := identity.NormalizeEmail(email)
		if !ok {
			f.Fail("email", "not a valid email address")
		} else if why := checkProofAddress(addr, domain); why != "" {
			f.Fail("email", why)
		}
		email = addr
	case method == methodEmail && est == jsonbody.WrongType:
		f.Fail("email", "must be a string")
	case method == methodEmail:
		f.Fail("email", "required with method email: admin@, postmaster@, hostmaster@ or webmaster@ the domain")
	case method == methodDNS && est != jsonbody.Absent:
		f.Fail("email", "only with method email")
	}
	if err := f.Err(); err != nil {
		return err
	}
	d, err := h.doms.ClaimDomain(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), domain, method, email)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(d)
}

func (h handler) domains(c *fiber.Ctx) error {
	out, err := h.doms.Domains(c.UserContext(), guard.ProjectOf(c), c.Params("orgId"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"domains": out})
}

func (h handler) removeDomain(c *fiber.Ctx) error {
	domain := strings.Clone(c.Params("domain"))
	if err := h.doms.RemoveDomain(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), domain); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"ok": true, "domain": domain})
}

func (h handler) verifyDomain(c *fiber.Ctx) error {
	var code *string
	if len(strings.TrimSpace(string(c.Body()))) > 0 { // the DNS proof needs no body
		f := jsonbody.Read(c.Body())
		refuseUnknown(f, []string{"code"}, "a verification")
		switch v, st := f.String("code"); st {
		case jsonbody.OK:
			code = &v
		case jsonbody.WrongType, jsonbody.Null:
			f.Fail("code", "must be a string")
		}
		if err := f.Err(); err != nil {
			return err
		}
	}
	d, err := h.doms.VerifyDomain(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), strings.Clone(c.Params("domain")), code)
	if err != nil {
		return err
	}
	return c.JSON(d)
}

func (h handler) policy(c *fiber.Ctx) error {
	p, err := h.doms.Policy(c.UserContext(), guard.ProjectOf(c), c.Params("orgId"))
	if err != nil {
		return err
	}
	return c.JSON(p)
}

// readPolicy reads PUT …/policy: every field but autoJoin is required, so a client that
// forgets one does not turn a rule off by accident.
func readPolicy(body []byte) (Policy, error) {
	f := jsonbody.Read(body)
	refuseUnknown(f, policyFields, "a policy")
	var p Policy
	flag := func(name string) bool {
		v, st := f.Bool(name)
		if st != jsonbody.OK {
			f.Fail(name, "required boolean")
		}
		return v
	}
	p.SSORequired, p.MFARequired = flag("ssoRequired"), flag("mfaRequired")
	p.RevokeMintedOnDeprovision = flag("revokeMintedOnDeprovision")
	switch n, whole, st := f.Integer("sessionMaxHours"); {
	case st != jsonbody.OK || !whole:
		f.Fail("sessionMaxHours", "required integer")
	case n < 0 || n > maxSessionHours:
		f.Fail("sessionMaxHours", fmt.Sprintf("0 (the project's own lifetime) or 1 to %d", maxSessionHours))
	default:
		p.SessionMaxHours = int(n)
	}
	switch raw, st := f.RawObject("autoJoin"); st {
	case jsonbody.Absent, jsonbody.Null:
	case jsonbody.WrongType:
		f.Fail("autoJoin", "must be { role } or null")
	default:
		j := jsonbody.Read(raw)
		for name := range j.Object {
			if name != "role" {
				f.Fail("autoJoin."+name, "not a field of autoJoin")
			}
		}
		switch role, st := j.String("role"); {
		case st == jsonbody.OK && role != "":
			p.AutoJoin = &AutoJoin{Role: role}
		default:
			f.Fail("autoJoin.role", "required string: the role people who prove an address in a verified domain are given")
		}
	}
	return p, f.Err()
}

func (h handler) putPolicy(c *fiber.Ctx) error {
	p, err := readPolicy(c.Body())
	if err != nil {
		return err
	}
	out, err := h.doms.PutPolicy(c.UserContext(), actorOf(c), strings.Clone(c.Params("orgId")), p)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

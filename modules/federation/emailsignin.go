package federation

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"errors"
	"math/big"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/ent/emailsignin"
	"github.com/authcore/authcore/ent/schema"
	"github.com/authcore/authcore/platform/audit"
	"github.com/authcore/authcore/platform/database"
	"github.com/authcore/authcore/platform/identity"
	platformmail "github.com/authcore/authcore/platform/mail"
	"github.com/authcore/authcore/platform/secret"
)

// Sign-in by mail (SPEC §20): a link and a code, one use between them, 10 minutes; three
// mails an hour per address; five wrong codes kill one.
const (
	mailKind     = "esl" // ac_esl_…
	mailTTL      = 10 * time.Minute
	mailsPerHour = 3
	maxCodeTries = 5
	codePurpose  = "email-signin-code"
	// SigninLinkPath is the console page a mailed link opens; it posts the token, so a
	// mail scanner that fetches links does not spend it.
	SigninLinkPath = "/console/signin-link"
)

//go:embed templates
var templateFS embed.FS

var mails = platformmail.MustTemplates(templateFS)

func newCode() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	s := n.String()
	return strings.Repeat("0", 6-len(s)) + s
}

// codeMAC binds a code to its row, so a code is good for that mail only.
func (s *service) codeMAC(rowID, code string) string {
	return s.keys.MAC(codePurpose, []byte(rowID+"\x00"+code))
}

// requestMail mails a link and a code to addr, when it may: the same answer, after the
// same queries, whether or not an account has the address (SPEC §20: no enumeration).
func (s *service) requestMail(ctx context.Context, tenant, addr string) error {
	if !s.mail.Configured() {
		return errMailNotConfigured
	}
	if err := s.builtInAllowed(ctx, tenant, addr, "email"); err != nil {
		if orgRefusal(err) {
			return nil // SPEC §26: still 202, and no mail; the code's sign-in would be refused
		}
		return err
	}
	token, err := secret.NewToken(mailKind)
	if err != nil {
		return err
	}
	code := newCode()
	_, found, err := s.users.AccountByEmail(ctx, tenant, addr)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	recent, err := s.ent.EmailSignIn.Query().Where(emailsignin.TenantID(tenant), emailsignin.Email(addr),
		emailsignin.CreatedAtGT(now.Add(-time.Hour))).Count(ctx)
	if err != nil || recent >= mailsPerHour || (!found && s.cfg.Signup == "closed") {
		return err
	}
	id := schema.NewID(schema.EmailSigninIDPrefix)
	if err := s.ent.EmailSignIn.Create().SetID(id).SetTenantID(tenant).SetEmail(addr).SetTokenDigest(secret.DigestOf(token).Bytes()).
		SetCodeMAC(s.codeMAC(id, code)).SetCreatedAt(now).SetExpiresAt(now.Add(mailTTL)).Exec(ctx); err != nil {
		return err
	}
	link := s.self + SigninLinkPath + "?token=" + url.QueryEscape(token)
	return s.send(ctx, tenant, addr, "signin", "Your sign-in code", map[string]any{"Code": code, "Link": link})
}

// mailProof is one of the two things a mail gives: the link's token, or the address and
// its code.
type mailProof struct {
	Token       string
	Email, Code string
	Tenant      string
	UserAgent   string
	IP          string
	Origin      audit.Origin
}

// finishMail spends a mail sign-in and signs its address in, creating the user when
// sign-up is open (the address proven by the act). A wrong code counts toward the row's
// five; wrongs also spend the account's budget of failed sign-ins (the caller's).
func (s *service) finishMail(ctx context.Context, p mailProof) (outcome, error) {
	now := s.clock.Now()
	var row *ent.EmailSignIn
	via := "email_link"
	if p.Token != "" {
		if !secret.CheckToken(mailKind, p.Token) {
			return outcome{}, errInvalidToken
		}
		r, err := s.ent.EmailSignIn.Query().Where(emailsignin.TokenDigest(secret.DigestOf(p.Token).Bytes()),
			emailsignin.UsedAtIsNil(), emailsignin.ExpiresAtGT(now)).Only(ctx)
		if ent.IsNotFound(err) {
			return outcome{}, errInvalidToken
		}
		if err != nil {
			return outcome{}, err
		}
		row = r
	} else {
		via = "email_code"
		// Under an org's ssoRequired no code was mailed (the request still said 202): the
		// sign-in says why, which tells nothing of the account, only of the domain.
		if err := s.SignInAllowed(ctx, p.Tenant, p.Email, identity.Via{Method: "email"}); orgRefusal(err) {
			return outcome{}, err
		}
		r, err := s.ent.EmailSignIn.Query().Where(emailsignin.TenantID(p.Tenant), emailsignin.Email(p.Email),
			emailsignin.UsedAtIsNil(), emailsignin.ExpiresAtGT(now)).Order(ent.Desc(emailsignin.FieldCreatedAt), ent.Desc(emailsignin.FieldID)).First(ctx)
		if ent.IsNotFound(err) {
			return outcome{}, errInvalidCode
		}
		if err != nil {
			return outcome{}, err
		}
		if subtle.ConstantTimeCompare([]byte(r.CodeMAC), []byte(s.codeMAC(r.ID, p.Code))) != 1 {
			// The fifth wrong code kills the mail: its link too.
			upd := s.ent.EmailSignIn.Update().Where(emailsignin.ID(r.ID), emailsignin.UsedAtIsNil()).AddAttempts(1)
			if r.Attempts+1 >= maxCodeTries {
				upd = upd.SetUsedAt(now)
			}
			if err := upd.Exec(ctx); err != nil {
				return outcome{}, err
			}
			return outcome{}, errInvalidCode
		}
		row = r
	}
	if err := s.SignInAllowed(ctx, row.TenantID, row.Email, identity.Via{Method: "email"}); err != nil {
		return outcome{}, err
	}
	acc, found, err := s.users.AccountByEmail(ctx, row.TenantID, row.Email)
	if err != nil {
		return outcome{}, err
	}
	if !found && s.cfg.Signup == "closed" {
		return outcome{}, errSignupClosed
	}
	if found {
		if err := s.users.Admit(ctx, acc.ID); err != nil {
			return outcome{}, err
		}
	}
	dropped := false
	err = database.WithTx(ctx, s.ent, func(tx *ent.Tx) error {
		n, err := tx.EmailSignIn.Update().Where(emailsignin.ID(row.ID), emailsignin.UsedAtIsNil(), emailsignin.AttemptsLT(maxCodeTries)).
			SetUsedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if n != 1 { // spent by a racing request, or killed by wrong codes meanwhile
			if p.Token != "" {
				return errInvalidToken
			}
			return errInvalidCode
		}
		switch {
		case !found:
			if acc, err = s.users.CreateProven(ctx, tx, row.TenantID, row.Email, nil); err != nil {
				if errors.Is(err, identity.ErrEmailTaken) {
					return errInvalidCode // created meanwhile: a new mail signs it in
				}
				return err
			}
		case !acc.EmailVerified:
			// The mailbox's holder becomes the account's only owner (pre-account takeover).
			if dropped, err = s.proofs.Proven(ctx, tx, acc.ID, via, "", p.Origin); err != nil {
				return err
			}
			acc.EmailVerified, acc.HasPassword = true, false
		}
		if !found {
			if _, err := s.audit.Record(ctx, tx, audit.Event{ActorID: &acc.ID, ProjectID: row.TenantID, Action: audit.ActionSignUp, Origin: p.Origin,
				Metadata: map[string]any{"userId": acc.ID, "method": via}}); err != nil {
				return err
			}
		}
		if _, err = s.audit.Record(ctx, tx, audit.Event{ActorID: &acc.ID, ProjectID: row.TenantID, Action: audit.ActionSignIn, Origin: p.Origin,
			Metadata: map[string]any{"userId": acc.ID, "method": via, "via": via, "signup": !found}}); err != nil {
			return err
		}
		if s.orgs == nil || row.TenantID == identity.PublicTenant {
			return nil
		}
		// The mail proved the address: an org that verified its domain may take the person in.
		return s.orgs.AutoJoin(ctx, tx, row.TenantID, acc.ID, row.Email)
	})
	if err != nil {
		return outcome{}, err
	}
	if dropped {
		if _, err := s.sessions.RevokeUser(ctx, acc.ID, ""); err != nil {
			return outcome{}, err
		}
	}
	return s.signIn(ctx, acc, "", amrEmail, p.UserAgent, p.IP)
}

func (s *service) pruneMail(ctx context.Context, cut time.Time) error {
	_, err := s.ent.EmailSignIn.Delete().Where(emailsignin.ExpiresAtLT(cut)).Exec(ctx)
	return err
}

// send renders a mail and queues it; what the caller sees never depends on the mail.
func (s *service) send(ctx context.Context, tenant, to, tmpl, subject string, data map[string]any) error {
	product := "authcore"
	if tenant != identity.PublicTenant && s.tenants != nil {
		if name, ok, err := s.tenants.TenantName(ctx, tenant); err == nil && ok {
			product = name
		}
	}
	data["Product"], data["Email"] = inline(product), to
	text, html, err := mails.Render(tmpl, data)
	if err != nil {
		return err
	}
	if err := s.mail.Send(platformmail.Message{To: to, Subject: subject + " — " + product, Text: text, HTML: html, Purpose: tmpl}); err != nil {
		s.log.WarnContext(ctx, "mail not queued", "purpose", tmpl, "error", err)
	}
	return nil
}

// inline keeps user text on its line of a mail's text part (SPEC §9a).
func inline(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

package auditstream

import (
	"context"
	htmltemplate "html/template"
	"strings"
	texttemplate "text/template"

	"github.com/authcore/authcore/ent"
	"github.com/authcore/authcore/platform/identity"
	"github.com/authcore/authcore/platform/mail"
)

// pauseMail tells a project's admins that one of its streams was paused after failing
// for a day (SPEC §28). The last error is the receiver's words: it goes in quoted.
type pauseMail struct {
	mail    mail.Sender
	members identity.Memberships
	people  identity.Directory
}

type pausedView struct {
	Stream, Type, Project, Error, Resume string
}

var (
	pausedText = texttemplate.Must(texttemplate.New("text").Parse(`Hello,

An audit stream of a project you administer has failed to deliver for 24 hours and is now
paused: audit events are kept, but none are sent until you resume it.

  Stream: {{.Stream}} ({{.Type}})
  Project: {{.Project}}
  Last error: {{.Error}}

Once the receiver is back, resume the stream where it stopped:

  POST {{.Resume}}

or replay it from an event id or a time (POST …/replay { "from": … }).
`))
	pausedHTML = htmltemplate.Must(htmltemplate.New("html").Parse(`<p>Hello,</p>
<p>An audit stream of a project you administer has failed to deliver for 24 hours and is now
paused: audit events are kept, but none are sent until you resume it.</p>
<ul><li>Stream: {{.Stream}} ({{.Type}})</li><li>Project: {{.Project}}</li><li>Last error: {{.Error}}</li></ul>
<p>Once the receiver is back, resume the stream where it stopped: <code>POST {{.Resume}}</code>,
or replay it from an event id or a time.</p>
`))
)

// send mails every admin of st's project.
func (p *pauseMail) send(ctx context.Context, st *ent.AuditStream) error {
	if !p.mail.Configured() {
		return nil
	}
	ids, err := p.members.MemberIDs(ctx, st.ProjectID)
	if err != nil {
		return err
	}
	var admins []string
	for _, id := range ids {
		role, ok, err := p.members.Role(ctx, st.ProjectID, id)
		if err != nil {
			return err
		}
		if ok && role == identity.RoleAdmin {
			admins = append(admins, id)
		}
	}
	emails, err := p.people.Emails(ctx, admins)
	if err != nil {
		return err
	}
	last := ""
	if st.LastError != nil {
		last = *st.LastError
	}
	v := pausedView{Stream: st.ID, Type: st.Type.String(), Project: st.ProjectID, Error: mail.Quote(last),
		Resume: "/v1/projects/" + st.ProjectID + "/audit-streams/" + st.ID + "/resume"}
	var text, html strings.Builder
	if err := pausedText.Execute(&text, v); err != nil {
		return err
	}
	if err := pausedHTML.Execute(&html, v); err != nil {
		return err
	}
	for _, id := range admins {
		to, ok := emails[id]
		if !ok {
			continue
		}
		if err := p.mail.Send(mail.Message{To: to, Subject: "An audit stream is paused — authcore", Text: text.String(),
			HTML: html.String(), Purpose: "audit_stream_paused"}); err != nil {
			return err
		}
	}
	return nil
}

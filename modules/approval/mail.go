package approval

import (
	"embed"

	"github.com/authcore/authcore/platform/mail"
)

//go:embed templates
var templateFS embed.FS

// mails are the approval request's; what others chose goes in quoted (mail.Quote).
var mails = mail.MustTemplates(templateFS)

// quote is mail.Quote, or "" for nothing.
func quote(s string) string {
	if s == "" {
		return ""
	}
	return mail.Quote(s)
}

func mailMessage(to, text, html string) mail.Message {
	return mail.Message{To: to, Subject: "An agent asks for your approval — authcore", Text: text, HTML: html, Purpose: "approval_request"}
}

package approval

import (
	"embed"
	htmltemplate "html/template"
	texttemplate "text/template"

	"github.com/authcore/authcore/platform/mail"
)

//go:embed templates
var templateFS embed.FS

// html/template escapes the HTML part; what others chose goes in quoted (mail.Quote).
var (
	htmlMails = htmltemplate.Must(htmltemplate.ParseFS(templateFS, "templates/*.html"))
	textMails = texttemplate.Must(texttemplate.ParseFS(templateFS, "templates/*.txt"))
)

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

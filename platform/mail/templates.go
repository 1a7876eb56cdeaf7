package mail

import (
	"bytes"
	htmltemplate "html/template"
	"io/fs"
	texttemplate "text/template"
)

// Templates are a flow's mails, each a pair under templates/ of the flow's own files:
// name.txt, the text part (text/template), and name.html, its HTML alternative
// (html/template, which escapes what users supplied). What others chose goes in quoted
// (Quote); what the mails say stays the flow's.
type Templates struct {
	text *texttemplate.Template
	html *htmltemplate.Template
}

// MustTemplates parses the templates/*.txt and templates/*.html of fsys, the flow's
// embedded files: a malformed one is a build mistake, so it stops the process at once.
func MustTemplates(fsys fs.FS) Templates {
	return Templates{
		text: texttemplate.Must(texttemplate.ParseFS(fsys, "templates/*.txt")),
		html: htmltemplate.Must(htmltemplate.ParseFS(fsys, "templates/*.html")),
	}
}

// Render is mail name's two parts, rendered with data.
func (t Templates) Render(name string, data any) (text, html string, err error) {
	var tb, hb bytes.Buffer
	if err := t.text.ExecuteTemplate(&tb, name+".txt", data); err != nil {
		return "", "", err
	}
	if err := t.html.ExecuteTemplate(&hb, name+".html", data); err != nil {
		return "", "", err
	}
	return tb.String(), hb.String(), nil
}

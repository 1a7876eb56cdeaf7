package mail

import (
	"strings"
	"testing"
	"testing/fstest"
)

// A mail's two parts come from its pair of templates: the HTML part escapes what a user
// supplied, the text part keeps it as it is; a mail without its pair is an error.
func TestTemplatesRenderBothParts(t *testing.T) {
	fsys := fstest.MapFS{
		"templates/hello.txt":  {Data: []byte("Hello {{.Name}}")},
		"templates/hello.html": {Data: []byte("<p>Hello {{.Name}}</p>")},
	}
	mails := MustTemplates(fsys)
	text, html, err := mails.Render("hello", map[string]any{"Name": "<Ann>"})
	if err != nil || text != "Hello <Ann>" || html != "<p>Hello &lt;Ann&gt;</p>" {
		t.Fatalf("Render = %q, %q, %v", text, html, err)
	}
	if _, _, err := mails.Render("bye", nil); err == nil || !strings.Contains(err.Error(), "bye") {
		t.Fatalf("a mail without templates: %v", err)
	}
}

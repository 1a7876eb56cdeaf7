package samlcorpus

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
)

//go:embed corpus/*.json
var files embed.FS

// Case is one forged or wrong response (or an accepted control), read from corpus/*.json.
// The response is built in this order, each step optional:
//  1. the IdP makes the assertion for Person (or the case's Email) answering the flow;
//  2. Assertion edits it; Pad adds bytes to it;
//  3. Sign.Assertion signs it (enveloped, exclusive C14N, as crewjam's IdP does);
//  4. Encrypt encrypts it;
//  5. the Response is made around it; Response edits it; Sign.Response signs it;
//  6. Recipe restructures the signed document (the signature-wrapping family);
//  7. After edits the signed document; Prefix goes before its root element, Suffix after;
//  8. Form says how it is posted (base64 by default).
type Case struct {
	Name    string `json:"name"`
	Class   string `json:"class"`
	Attacks string `json:"attacks"`
	// Expect is "refused" or "accepted"; a refusal names the HTTP status and the error
	// code the ACS must answer with (empty: any 4xx).
	Expect string `json:"expect"`
	Status int    `json:"status,omitempty"`
	Code   string `json:"code,omitempty"`

	Email     string `json:"email,omitempty"`
	Sign      Sign   `json:"sign"`
	Encrypt   string `json:"encrypt,omitempty"` // "", "sp" (the connection's key), "foreign"
	Assertion []Op   `json:"assertion,omitempty"`
	Pad       int    `json:"pad,omitempty"` // bytes added to the assertion; -1: to exactly Limit
	Response  []Op   `json:"response,omitempty"`
	Recipe    string `json:"recipe,omitempty"`
	After     []Op   `json:"after,omitempty"`
	Prefix    string `json:"prefix,omitempty"`
	Suffix    string `json:"suffix,omitempty"`
	Form      *Form  `json:"form,omitempty"`

	// Flow: "" answers the browser's own request; "other-browser" answers a request
	// another browser started; "unsolicited" answers none (IdP-initiated);
	// "other-connection" answers this browser's request at the first connection and is
	// posted, without RelayState, to the connection that allows IdP-initiated sign-in;
	// "stolen" answers another browser's request and is posted without RelayState.
	Flow string `json:"flow,omitempty"`
	// Replay posts the valid response once (accepted), then this one again.
	Replay bool `json:"replay,omitempty"`
	// NotBurnt: after the refusal, a valid response carrying the same assertion ID (for a
	// new request) is still accepted.
	NotBurnt bool `json:"notBurnt,omitempty"`
	// Library "accepts": crewjam/saml's ServiceProvider alone takes this response (never
	// as the victim); §27 refuses it by a rule the app adds (no DTDs, one document, the
	// org's verified domains), so the self-check expects acceptance there.
	Library string `json:"library,omitempty"`
	// Stores: "both" runs the case on PostgreSQL as well as SQLite.
	Stores string `json:"stores,omitempty"`
	// Unsolicited: the connection allows IdP-initiated sign-in for this case.
	AllowIdpInitiated bool `json:"allowIdpInitiated,omitempty"`
}

// Sign says what is signed and how. Nil booleans mean true: the IdP signs both.
type Sign struct {
	Assertion *bool `json:"assertion,omitempty"`
	Response  *bool `json:"response,omitempty"`
	// Key: "idp" (default) or "foreign". KeyInfo: the certificate put in KeyInfo, "" for
	// the signing key's own, "idp", "foreign" or "none".
	Key     string `json:"key,omitempty"`
	KeyInfo string `json:"keyInfo,omitempty"`
	// ResponseKey, when set, signs the Response with another key than Key ("idp" or
	// "foreign"), its own certificate in KeyInfo.
	ResponseKey string `json:"responseKey,omitempty"`
	// Method and Digest: "sha256" (default) or "sha1".
	Method string `json:"method,omitempty"`
	Digest string `json:"digest,omitempty"`
}

func (s Sign) assertion() bool { return s.Assertion == nil || *s.Assertion }
func (s Sign) response() bool  { return s.Response == nil || *s.Response }

// Op edits the elements Path selects (etree path syntax, relative to the element being
// edited: the assertion, the response, or for After the response document's root).
type Op struct {
	// Op: "set" (text, or Attr), "time" (Attr = now + By), "remove" (the elements, or
	// Attr), "comment" (a comment into the text just before Value), "append" (Value, an XML
	// fragment, as the last child).
	Op    string `json:"op"`
	Path  string `json:"path"`
	Attr  string `json:"attr,omitempty"`
	Value string `json:"value,omitempty"`
	By    string `json:"by,omitempty"`
}

// Form is how the response is posted: Encoding "base64" (default), "raw" (Value as is,
// the generated response ignored), "absent" (no SAMLResponse field). XML, when set, is a
// static document posted instead of the generated one; {{acs}}, {{audience}},
// {{requestId}}, {{issuer}}, {{now}}, {{later}} and {{victim}} are filled in.
type Form struct {
	Encoding string `json:"encoding,omitempty"`
	Value    string `json:"value,omitempty"`
	XML      string `json:"xml,omitempty"`
}

// Limit is §27's bound on a response's decoded XML.
const Limit = 256 << 10

// Load reads every case, sorted by name; names are unique.
func Load() ([]Case, error) {
	entries, err := files.ReadDir("corpus")
	if err != nil {
		return nil, err
	}
	var all []Case
	seen := map[string]string{}
	for _, e := range entries {
		b, err := files.ReadFile(path.Join("corpus", e.Name()))
		if err != nil {
			return nil, err
		}
		var cs []Case
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cs); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		for _, c := range cs {
			if c.Name == "" || c.Attacks == "" || (c.Expect != "refused" && c.Expect != "accepted") {
				return nil, fmt.Errorf("%s: case %q needs a name, what it attacks, and expect refused|accepted", e.Name(), c.Name)
			}
			if c.Recipe != "" && recipes[c.Recipe] == nil {
				return nil, fmt.Errorf("%s: case %q names no known recipe %q", e.Name(), c.Name, c.Recipe)
			}
			if prev, dup := seen[c.Name]; dup {
				return nil, fmt.Errorf("case %q is in %s and %s", c.Name, prev, e.Name())
			}
			seen[c.Name] = e.Name()
			c.Class = strings.TrimSuffix(e.Name(), ".json")
			all = append(all, c)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all, nil
}

package identity

import "regexp"

// MaxDomain bounds a domain name (RFC 1035's 255 octets on the wire, less the root).
const MaxDomain = 253

var domainPattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidDomain is the one rule for a domain that a provider or an org claims: lower-case
// labels of a-z, 0-9 and inner '-', at least two, the last starting with a letter, at
// most MaxDomain bytes. Upper case is refused rather than folded, so a claim is shown as
// it is stored.
func ValidDomain(d string) bool { return len(d) <= MaxDomain && domainPattern.MatchString(d) }

// sharedMailDomains are domains anyone can have an address at.
var sharedMailDomains = map[string]bool{
	"gmail.com": true, "googlemail.com": true, "outlook.com": true, "hotmail.com": true, "live.com": true, "msn.com": true,
	"yahoo.com": true, "icloud.com": true, "me.com": true, "aol.com": true, "proton.me": true, "protonmail.com": true,
	"gmx.com": true, "gmx.de": true, "mail.com": true, "yandex.ru": true, "zoho.com": true, "fastmail.com": true,
}

// SharedMailDomain says whether anyone may have an address at d (gmail.com …): an address
// there proves nothing about who runs the domain, and no customer speaks for it.
func SharedMailDomain(d string) bool { return sharedMailDomains[d] }

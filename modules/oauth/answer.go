package oauth

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/authcore/authcore/platform/oauth"
)

// appendAnswer appends m as encoding/json would encode it (keys sorted, HTML characters
// escaped), writing strings of plain ASCII, integers and booleans itself and handing every
// other value to encoding/json. An introspection answer is nine such fields: encoding/json's
// map encoder (reflection, a sort, a boxed value a field) cost as much as the rest of the
// endpoint's own work, and no library encodes a map[string]any without it.
// FuzzAnswerMatchesEncodingJSON holds the two to the same bytes.
func appendAnswer(dst []byte, m map[string]any) ([]byte, error) {
	var keys [16]string
	ks := keys[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	dst = append(dst, '{')
	for i, k := range ks {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendString(dst, k); err != nil {
			return nil, err
		}
		dst = append(dst, ':')
		switch v := m[k].(type) {
		case string:
			dst, err = appendString(dst, v)
		case bool:
			dst = strconv.AppendBool(dst, v)
		case int:
			dst = strconv.AppendInt(dst, int64(v), 10)
		case int64:
			dst = strconv.AppendInt(dst, v, 10)
		case nil:
			dst = append(dst, "null"...)
		default:
			dst, err = appendJSON(dst, v)
		}
		if err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendString writes s quoted when it is printable ASCII with nothing encoding/json escapes
// (a quote, a backslash, <, > or &); anything else goes through encoding/json.
func appendString(dst []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return appendJSON(dst, s)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), nil
}

func appendJSON(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// appendToken appends a token answer as encoding/json encodes oauth.Token (its fields in
// order, the omitempty ones left out when empty); FuzzTokenMatchesEncodingJSON holds the
// two to the same bytes. Every token grant answers with one.
func appendToken(dst []byte, t oauth.Token) ([]byte, error) {
	var err error
	field := func(name, v string, omitEmpty bool) {
		if err != nil || (omitEmpty && v == "") {
			return
		}
		if len(dst) > 1 {
			dst = append(dst, ',')
		}
		dst = append(dst, name...)
		dst, err = appendString(dst, v)
	}
	dst = append(dst, '{')
	field(`"access_token":`, t.AccessToken, false)
	field(`"issued_token_type":`, t.IssuedTokenType, true)
	field(`"token_type":`, t.TokenType, false)
	dst = append(dst, `,"expires_in":`...)
	dst = strconv.AppendInt(dst, int64(t.ExpiresIn), 10)
	field(`"scope":`, t.Scope, false)
	field(`"refresh_token":`, t.RefreshToken, true)
	field(`"id_token":`, t.IDToken, true)
	if err == nil && len(t.AuthorizationDetails) > 0 {
		dst = append(dst, `,"authorization_details":`...)
		dst, err = appendJSON(dst, t.AuthorizationDetails)
	}
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

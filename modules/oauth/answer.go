package oauth

import (
	"slices"
	"strconv"

	"github.com/authcore/authcore/platform/jsonbody"
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
		if dst, err = jsonbody.AppendString(dst, k); err != nil {
			return nil, err
		}
		dst = append(dst, ':')
		switch v := m[k].(type) {
		case string:
			dst, err = jsonbody.AppendString(dst, v)
		case bool:
			dst = strconv.AppendBool(dst, v)
		case int:
			dst = strconv.AppendInt(dst, int64(v), 10)
		case int64:
			dst = strconv.AppendInt(dst, v, 10)
		case nil:
			dst = append(dst, "null"...)
		default:
			dst, err = jsonbody.AppendJSON(dst, v)
		}
		if err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
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
		dst, err = jsonbody.AppendString(dst, v)
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
		dst, err = jsonbody.AppendJSON(dst, t.AuthorizationDetails)
	}
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

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
	o := jsonbody.Begin(dst)
	o.String("access_token", t.AccessToken)
	if t.IssuedTokenType != "" {
		o.String("issued_token_type", t.IssuedTokenType)
	}
	o.String("token_type", t.TokenType)
	o.Int("expires_in", int64(t.ExpiresIn))
	o.String("scope", t.Scope)
	if t.RefreshToken != "" {
		o.String("refresh_token", t.RefreshToken)
	}
	if t.IDToken != "" {
		o.String("id_token", t.IDToken)
	}
	if len(t.AuthorizationDetails) > 0 {
		o.JSON("authorization_details", t.AuthorizationDetails)
	}
	return o.End()
}

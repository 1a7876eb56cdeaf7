package lifecycle

import (
	"go.uber.org/fx"

	"entgo.io/ent/schema/field"
)

// Screen is a kind's console screen (SPEC §10, §15): the console learns screens from the
// kinds, as it learns products from the catalogue, and draws each the same way — a list
// with each credential's usage, a mint form of the kind's own fields, roll and revoke.
type Screen struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
	// Collection and Me are the routes' paths, the project as {id}.
	Collection string `json:"collection"`
	Me         string `json:"me"`
	// Fields are its own fields, as the mint form asks for them and the list shows them.
	Fields []ScreenField `json:"fields"`
	// Hint names the record's hint field; ExpiresRequired says a mint must give
	// expiresInDays.
	Hint            string `json:"hint"`
	ExpiresRequired bool   `json:"expiresRequired"`
}

// ScreenField is one own field: its JSON name, its type (string, strings, json,
// boolean, number, integer, date-time) and whether a mint must give it.
type ScreenField struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Required bool     `json:"required"`
	Enum     []string `json:"enum"`
}

// AsScreen contributes the Screen returned by constructor f.
func AsScreen(f any) fx.Option {
	return fx.Provide(fx.Annotate(f, fx.ResultTags(`group:"console_screens"`)))
}

// Screens are every contributed screen.
type Screens struct {
	fx.In
	All []Screen `group:"console_screens"`
}

// Screen is the kind's screen under title.
func (l *Lifecycle) Screen(title string, r Routes) Screen {
	s := Screen{Kind: l.spec.Name, Title: title, Collection: openapiPath(r.Collection), Me: openapiPath(r.Me),
		Hint: camel(l.t.mixin.HintColumn()), ExpiresRequired: l.t.mixin.ExpiresRequired, Fields: []ScreenField{}}
	for _, c := range l.t.own {
		if c.desc.Sensitive {
			continue
		}
		f := ScreenField{Name: camel(c.name), Required: !c.nullable && c.desc.Default == nil && !c.strings, Enum: []string{}}
		switch c.typ {
		case field.TypeString, field.TypeEnum:
			f.Type = "string"
			for _, e := range c.desc.Enums {
				f.Enum = append(f.Enum, e.V)
			}
		case field.TypeJSON:
			f.Type = "json"
			if c.strings {
				f.Type = "strings"
			}
		case field.TypeBool:
			f.Type = "boolean"
		case field.TypeFloat64:
			f.Type = "number"
		case field.TypeTime:
			f.Type = "date-time"
		default:
			f.Type = "integer"
		}
		s.Fields = append(s.Fields, f)
	}
	return s
}

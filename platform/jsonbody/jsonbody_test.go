package jsonbody

import "testing"

func TestParse(t *testing.T) {
	for _, body := range []string{"", "  ", "not json", "[]", `"s"`, "null", "1", "{", `{"a":1} x`} {
		if _, ok := Parse([]byte(body)); ok {
			t.Errorf("%q parsed as an object", body)
		}
	}
	if o, ok := Parse([]byte(` {"a":1} `)); !ok || len(o) != 1 {
		t.Fatal("object not parsed")
	}
	if len(ParseOrEmpty([]byte("nope"))) != 0 {
		t.Fatal("ParseOrEmpty")
	}
}

func TestFields(t *testing.T) {
	o, _ := Parse([]byte(`{"s":"x","n":1.5,"i":30,"f":30.0,"b":true,"z":null,"arr":["a","b"],"bad":[1]}`))
	if s, st := o.String("s"); s != "x" || st != OK {
		t.Error("string")
	}
	if _, st := o.String("n"); st != WrongType {
		t.Error("number as string")
	}
	if _, st := o.String("missing"); st != Absent {
		t.Error("absent")
	}
	if _, st := o.String("z"); st != Null {
		t.Error("null")
	}
	if _, whole, st := o.Integer("n"); whole || st != OK {
		t.Error("1.5 is not whole")
	}
	if v, whole, _ := o.Integer("i"); !whole || v != 30 {
		t.Error("30")
	}
	if v, whole, _ := o.Integer("f"); !whole || v != 30 {
		t.Error("30.0")
	}
	if _, _, st := o.Integer("s"); st != WrongType {
		t.Error("string as integer")
	}
	if b, st := o.Bool("b"); !b || st != OK {
		t.Error("bool")
	}
	if _, st := o.Bool("i"); st != WrongType {
		t.Error("number as bool")
	}
	if ss, st := o.Strings("arr"); len(ss) != 2 || st != OK {
		t.Error("strings")
	}
	if _, st := o.Strings("bad"); st != WrongType {
		t.Error("[1] as strings")
	}
}

// Package jsonfields tells what encoding/json sees of a struct type: its
// fields by JSON name, embedded structs promoted. The spec decoder walks
// olm-cmp.yaml against the Spec type with it, and the live form walks
// Kubernetes objects against their API types.
package jsonfields

import (
	"reflect"
	"strings"
	"sync"
)

// Field is what encoding/json needs to know of a struct field.
type Field struct {
	Type                reflect.Type
	OmitEmpty, OmitZero bool
}

var cache sync.Map // reflect.Type -> map[string]Field

// Of maps the JSON names of struct t's fields to them, as encoding/json
// does: a `json:"-"` field is left out, an unexported one too, a field
// without a name is named after the Go field, and the fields of an embedded
// struct without a name of its own (metav1.TypeMeta, `json:",inline"`) are
// promoted unless the outer struct has a field of the same name. The map is
// shared: callers must not change it.
func Of(t reflect.Type) map[string]Field {
	if m, ok := cache.Load(t); ok {
		return m.(map[string]Field)
	}
	m := map[string]Field{}
	var embedded []reflect.Type
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		jf := Field{Type: f.Type}
		for o := range strings.SplitSeq(opts, ",") {
			jf.OmitEmpty = jf.OmitEmpty || o == "omitempty"
			jf.OmitZero = jf.OmitZero || o == "omitzero"
		}
		m[name] = jf
	}
	// A field of the struct itself hides a promoted one of the same name.
	for _, et := range embedded {
		for name, jf := range Of(et) {
			if _, ok := m[name]; !ok {
				m[name] = jf
			}
		}
	}
	cache.Store(t, m)
	return m
}

package jsonfields

import (
	"reflect"
	"testing"
)

type inner struct {
	Kind  string `json:"kind"`
	Shade string `json:"name"` // hidden by outer's name
}

type outer struct {
	inner   `json:",inline"`
	Name    string            `json:"name"`
	Labels  map[string]string `json:"labels,omitempty"`
	When    *int              `json:"when,omitzero"`
	Skipped string            `json:"-"`
	Bare    bool
	private int
}

func TestOf(t *testing.T) {
	got := Of(reflect.TypeFor[outer]())
	want := map[string]Field{
		"kind":   {Type: reflect.TypeFor[string]()},
		"name":   {Type: reflect.TypeFor[string]()},
		"labels": {Type: reflect.TypeFor[map[string]string](), OmitEmpty: true},
		"when":   {Type: reflect.TypeFor[*int](), OmitZero: true},
		"Bare":   {Type: reflect.TypeFor[bool]()},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Of(outer) = %v, want %v", got, want)
	}
	if again := Of(reflect.TypeFor[outer]()); reflect.ValueOf(again).Pointer() != reflect.ValueOf(got).Pointer() {
		t.Error("a second call must return the cached map")
	}
}

package validate

import (
	"reflect"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/olm-cmp/olm-cmp/internal/validate/fieldtext"
)

// nestedProblems checks the labels the API server checks inside a
// built-in object, beyond its own metadata: the labels and annotations of
// templates (a pod template's, a volume claim template's), label selectors,
// and pods' nodeSelector (a spec.config nodeSelector lands there), each with
// apimachinery's own functions. The walk follows the Go type and only goes
// where such a field can be.
func nestedProblems(obj any) []string {
	var errs field.ErrorList
	v := reflect.ValueOf(obj)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	// The object's own metadata is checked with its kind's name rule.
	walkFields(v, nil, &errs, true)
	return fieldtext.Lines(errs)
}

var (
	objectMetaType    = reflect.TypeFor[metav1.ObjectMeta]()
	labelSelectorType = reflect.TypeFor[metav1.LabelSelector]()
	podSpecType       = reflect.TypeFor[corev1.PodSpec]()
)

func walk(v reflect.Value, p *field.Path, errs *field.ErrorList) {
	if !reaches(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), p, errs)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i), p.Index(i), errs)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			walk(it.Value(), p.Key(it.Key().String()), errs)
		}
	case reflect.Struct:
		switch v.Type() {
		case objectMetaType:
			m := v.Addr().Interface().(*metav1.ObjectMeta)
			*errs = append(*errs, metav1validation.ValidateLabels(m.Labels, p.Child("labels"))...)
			*errs = append(*errs, apimachineryvalidation.ValidateAnnotations(m.Annotations, p.Child("annotations"))...)
			return
		case labelSelectorType:
			s := v.Addr().Interface().(*metav1.LabelSelector)
			*errs = append(*errs, metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, p)...)
			return
		case podSpecType:
			*errs = append(*errs, metav1validation.ValidateLabels(v.Addr().Interface().(*corev1.PodSpec).NodeSelector, p.Child("nodeSelector"))...)
		}
		walkFields(v, p, errs, false)
	}
}

// walkFields walks the fields of struct v by their JSON names; inline
// (embedded) structs add no path segment. root skips the object's own
// metadata.
func walkFields(v reflect.Value, p *field.Path, errs *field.ErrorList, root bool) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || !reaches(f.Type) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || root && name == "metadata" {
			continue
		}
		if f.Anonymous && name == "" {
			walk(v.Field(i), p, errs)
			continue
		}
		if name == "" {
			name = f.Name
		}
		var child *field.Path
		if p == nil {
			child = field.NewPath(name)
		} else {
			child = p.Child(name)
		}
		walk(v.Field(i), child, errs)
	}
}

var reachCache sync.Map // reflect.Type -> bool

// reaches reports whether a value of type t can hold one of the types
// nestedProblems checks: most of an object's fields (strings, numbers,
// CRD schemas) cannot, and are never walked.
func reaches(t reflect.Type) bool {
	if r, ok := reachCache.Load(t); ok {
		return r.(bool)
	}
	r := reachesVia(t, map[reflect.Type]bool{})
	reachCache.Store(t, r)
	return r
}

func reachesVia(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // a recursive type (a CRD schema): its other fields decide
	}
	seen[t] = true
	switch t {
	case objectMetaType, labelSelectorType, podSpecType:
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return reachesVia(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && reachesVia(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

package bundle

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
)

type nopObserver struct{}

func (nopObserver) Resolved(error) {}
func (nopObserver) Pulled(error)   {}

// WithKeychain copies the loader's settings field by field (a struct copy
// would copy its singleflight groups, sync.Once and registry client, sharing
// the sidecar's in-flight calls and credentials with a tenant): this guard
// fails when an exported field is added to ImageLoader and not copied.
func TestWithKeychainCopiesEverySetting(t *testing.T) {
	var l ImageLoader
	v := reflect.ValueOf(&l).Elem()
	typ := v.Type()
	impls := []any{authn.DefaultKeychain, http.DefaultTransport, nopObserver{}}
	for i := range typ.NumField() {
		f, fv := typ.Field(i), v.Field(i)
		if !f.IsExported() {
			continue
		}
		switch fv.Kind() {
		case reflect.String:
			fv.SetString("x")
		case reflect.Int, reflect.Int64:
			fv.SetInt(7)
		case reflect.Slice:
			fv.Set(reflect.MakeSlice(fv.Type(), 1, 1))
		case reflect.Pointer:
			fv.Set(reflect.New(fv.Type().Elem()))
		case reflect.Struct:
			fv.Field(0).SetInt(7)
		case reflect.Interface:
			for _, c := range impls {
				if reflect.TypeOf(c).Implements(fv.Type()) {
					fv.Set(reflect.ValueOf(c))
					break
				}
			}
		}
		if fv.IsZero() {
			t.Fatalf("this test cannot set ImageLoader.%s (%s): teach it, and WithKeychain, the new field", f.Name, f.Type)
		}
	}
	n := reflect.ValueOf(l.WithKeychain(nil)).Elem()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.IsExported() && !reflect.DeepEqual(n.Field(i).Interface(), v.Field(i).Interface()) {
			t.Errorf("WithKeychain(nil) does not copy ImageLoader.%s", f.Name)
		}
	}
}

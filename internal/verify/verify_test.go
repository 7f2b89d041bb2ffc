package verify_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/olm-cmp/olm-cmp/internal/trust"
	"github.com/olm-cmp/olm-cmp/internal/verify"
	"github.com/olm-cmp/olm-cmp/internal/verify/verifytest"
)

type signFunc func(t testing.TB, host, repo, digest string, k *verifytest.Key, o ...verifytest.Options)

var formats = map[string]struct {
	sign   signFunc
	format string
}{
	"bundle": {func(t testing.TB, host, repo, digest string, k *verifytest.Key, o ...verifytest.Options) {
		verifytest.SignBundle(t, host, repo, digest, k, o...)
	}, verify.FormatBundle},
	"tag": {verifytest.SignTag, verify.FormatTag},
}

// TestMatrix runs each policy mode against each outcome, in both formats.
func TestMatrix(t *testing.T) {
	outcomes := []struct {
		name string
		// sign signs (or not) host/repo@digest; nil: unsigned.
		sign func(t *testing.T, f signFunc, host, repo, digest string, trusted, other *verifytest.Key)
		// ok: verifies; what: a word of the problem otherwise.
		ok   bool
		what string
	}{
		{"signed", func(t *testing.T, f signFunc, host, repo, digest string, trusted, _ *verifytest.Key) {
			f(t, host, repo, digest, trusted)
		}, true, ""},
		{"unsigned", func(*testing.T, signFunc, string, string, string, *verifytest.Key, *verifytest.Key) {}, false, "no signature found"},
		{"unknown key", func(t *testing.T, f signFunc, host, repo, digest string, _, other *verifytest.Key) {
			f(t, host, repo, digest, other)
		}, false, "by a key the scope does not trust"},
		{"other digest", func(t *testing.T, f signFunc, host, repo, digest string, trusted, _ *verifytest.Key) {
			f(t, host, repo, digest, trusted, verifytest.Options{Digest: "sha256:" + strings.Repeat("ab", 32)})
		}, false, "another digest"},
		{"other repository", func(t *testing.T, f signFunc, host, repo, digest string, trusted, _ *verifytest.Key) {
			f(t, host, repo, digest, trusted, verifytest.Options{Ref: host + "/someone/else"})
		}, false, "another repository"},
	}
	for fname, fm := range formats {
		for _, referrers := range []bool{true, false} {
			if fname == "tag" && !referrers {
				continue // the .sig tag does not depend on the referrers API
			}
			host := verifytest.NewRegistry(t, referrers)
			trusted := verifytest.NewKey(t, verifytest.ECDSA)
			other := verifytest.NewKey(t, verifytest.ECDSA)
			for i, oc := range outcomes {
				repo := "ops/" + strings.ReplaceAll(oc.name, " ", "-")
				digest := verifytest.PushImage(t, host, repo, "v1")
				oc.sign(t, fm.sign, host, repo, digest, trusted, other)
				_ = i
				for _, mode := range []trust.Mode{trust.Enforce, trust.Warn, trust.Off} {
					for _, require := range []bool{false, true} {
						name := fname + "/" + map[bool]string{true: "referrers", false: "fallback"}[referrers] + "/" + oc.name + "/" + string(mode)
						if require {
							name += "/required"
						}
						t.Run(name, func(t *testing.T) {
							p := verifytest.Policy(t, verifytest.Scope(host, string(mode), trusted))
							v := verify.New(p, verify.Options{})
							res, err := v.Verify(context.Background(), host+"/"+repo, digest, require)
							effective := mode
							if require {
								effective = trust.Enforce
							}
							switch {
							case effective == trust.Off:
								if err != nil || res.Verified() || res.Mode != trust.Off {
									t.Fatalf("off: got %+v, %v; want unverified without error", res, err)
								}
								if res.Annotation() != "unverified" {
									t.Fatalf("annotation %q", res.Annotation())
								}
							case oc.ok:
								if err != nil {
									t.Fatalf("want verified, got %v", err)
								}
								if res.Signer != "key "+trusted.Name || res.Format != fm.format || res.Annotation() != res.Signer {
									t.Fatalf("got %+v", res)
								}
							case effective == trust.Warn:
								if err != nil || res.Verified() || !strings.Contains(res.Problem, oc.what) || res.Fix == "" {
									t.Fatalf("warn: got %+v, %v; want unverified with problem %q", res, err, oc.what)
								}
							default:
								var re *verify.RefusalError
								if !errors.As(err, &re) {
									t.Fatalf("enforce: got %+v, %v; want a refusal", res, err)
								}
								msg := err.Error()
								for _, want := range []string{host + "/" + repo + "@" + digest, `scope "` + host + `"`, oc.what, "; fix: "} {
									if !strings.Contains(msg, want) {
										t.Fatalf("refusal %q does not say %q", msg, want)
									}
								}
								if strings.Contains(msg, "\n") || res.Verified() {
									t.Fatalf("refusal not one line or result verified: %q", msg)
								}
							}
						})
					}
				}
			}
		}
	}
}

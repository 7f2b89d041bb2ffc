package requirements

import "fmt"

// Unverified is an image of the render (or a directory, which nothing signs)
// that the cluster's trust policy looked at and did not verify: a scope in
// warn mode let it through. render fills it in from the verifier's verdicts;
// this package only reports it.
type Unverified struct {
	// Role is "bundle" or "catalog".
	Role string
	// Image is the repository (or the directory as the spec names it),
	// Digest its manifest (or content) digest.
	Image, Digest string
	// Dir is true for a directory.
	Dir bool
	// Scope is the policy scope that covered the image.
	Scope string
	// Problem is what the verifier found (what an enforce scope would have
	// refused it for), Fix what would make it verify ("" when the verifier
	// said nothing more).
	Problem, Fix string
}

// signatureFindings lists each unverified image under the signature
// category, by repository (or directory), so that an accept entry
// (signature:quay.io/org/*) outlives version bumps.
func signatureFindings(in Input) []Finding {
	var fs []Finding
	for _, u := range in.Unverified {
		f := Finding{Category: Signature, Subject: u.Image, Severity: Warning}
		fix := u.Fix
		if u.Dir {
			f.Source = fmt.Sprintf("%s directory %s", u.Role, u.Image)
			f.Message = u.Problem
			if fix == "" {
				fix = fmt.Sprintf("render the %s from a signed image", u.Role)
			}
		} else {
			f.Source = fmt.Sprintf("%s image %s@%s", u.Role, u.Image, u.Digest)
			f.Message = fmt.Sprintf("not verified by the trust policy (scope %s, mode warn): %s", u.Scope, u.Problem)
			if fix == "" {
				fix = "sign it with a key the scope trusts (docs/signatures.md)"
			}
		}
		f.Fix = fmt.Sprintf("%s; or accept it knowingly in spec.accept (%s)", fix, f.Key())
		fs = append(fs, f)
	}
	return fs
}

package convert

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
)

// maxNameLength is the longest name OLM generates (a DNS-1123 label).
const maxNameLength = 63

// DeepHashObject reproduces OLM v1's hash.DeepHashObject: the json.Encoder
// output of obj (trailing newline included) hashed with SHA-224, written as a
// base-36 big integer. OLM v1 names RBAC objects with it, so the exact bytes
// matter: change nothing here without checking the golden files.
func DeepHashObject(obj any) (string, error) {
	h := sha256.New224()
	if err := json.NewEncoder(h).Encode(obj); err != nil {
		return "", fmt.Errorf("hash %T: %w", obj, err)
	}
	var i big.Int
	i.SetBytes(h.Sum(nil))
	return i.Text(36), nil
}

// ObjectNameForBaseAndSuffix reproduces OLM v1's util.ObjectNameForBaseAndSuffix:
// "base-suffix", with base cut so the whole fits in 63 characters. The result
// may end the base in "." or "-" (e.g. "argocd-operator.v0.-3gkm…"): valid for
// RBAC names, not DNS-1123, exactly like OLM.
func ObjectNameForBaseAndSuffix(base, suffix string) string {
	if len(base)+len(suffix) > maxNameLength {
		keep := max(maxNameLength-len(suffix)-1, 0) // OLM would panic on a >62-char suffix
		base = base[:keep]
	}
	return base + "-" + suffix
}

// hashedName is OLM v1's DefaultUniqueNameGenerator.
func hashedName(base string, obj any) (string, error) {
	h, err := DeepHashObject(obj)
	if err != nil {
		return "", err
	}
	return ObjectNameForBaseAndSuffix(base, h), nil
}

package safefile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
)

// MaxHashedStamp is the largest file Stamp names by its content: policy
// files are a few kilobytes, and hashing one on every request costs
// microseconds; bigger files (a trusted root) are named by their metadata.
const MaxHashedStamp = 1 << 20

// Stamp names the version of the regular file at path (through links, as a
// ConfigMap volume's are), to tell whether it changed since a load: its
// size and modification time, and where the system gives them (Linux) its
// inode and status change time, which no user can set back: a same-size,
// same-mtime replacement changes one of them. Where the system does not
// give them, or the change time is too recent to tell two writes apart by
// it, the hash of the content (up to MaxHashedStamp bytes) is added. ""
// when it cannot be read: the caller loads again and fails with the reason.
func Stamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	sys, decisive := sysStamp(fi)
	s := fmt.Sprintf("%d %d %s", fi.Size(), fi.ModTime().UnixNano(), sys)
	if !decisive && fi.Size() <= MaxHashedStamp {
		data, err := Read(path, MaxHashedStamp, true)
		if err != nil {
			return ""
		}
		sum := sha256.Sum256(data)
		s += " " + hex.EncodeToString(sum[:])
	}
	return s
}

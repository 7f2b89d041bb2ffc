package cmpserver

import (
	"bufio"
	"bytes"
	"errors"
	"os"
)

// extraProjects are the ARGOCD_APP_PROJECT_NAME entries of the process's
// initial environment after the first (which os.Environ keeps). The
// environment is read entry by entry, never held: an entry is judged by
// its first bytes, however long it is.
func extraProjects() []string {
	f, err := os.Open("/proc/self/environ")
	if err != nil {
		return nil
	}
	defer f.Close()
	prefix := []byte(EnvAppProject + "=")
	r := bufio.NewReaderSize(f, 4096)
	var found []string
	atStart := true
	for {
		chunk, err := r.ReadSlice(0)
		if atStart && bytes.HasPrefix(chunk, prefix) {
			found = append(found, string(bytes.TrimSuffix(chunk, []byte{0})))
		}
		atStart = err == nil
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			break
		}
	}
	if len(found) < 2 {
		return nil
	}
	return found[1:]
}

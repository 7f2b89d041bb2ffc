//go:build !linux

package cmpserver

// extraProjects is nothing where the initial environment cannot be read:
// os.Environ is all there is.
func extraProjects() []string { return nil }

package cmpserver

import "os"

// Environ is the process environment for ParseEnv, as the command was
// started with it. Go's os.Environ keeps the first of two entries with one
// name and drops the other, so ARGOCD_APP_PROJECT_NAME sent twice would
// reach ParseEnv once and pass as the first value; where the system keeps
// the environment as it was given (Linux: /proc/self/environ), every
// further ARGOCD_APP_PROJECT_NAME found there is added back, so that
// generate refuses it as serve does.
func Environ() []string {
	env := os.Environ()
	return append(env, extraProjects()...)
}

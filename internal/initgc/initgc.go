// Package initgc keeps the garbage collector off while the packages of
// olm-cmp initialise. They allocate about 5 MB (regular expressions,
// schemes, metrics registries, validation tables), past the runtime's first
// 4 MB goal, so every process, `olm-cmp version` included, paid a
// collection before main of garbage that was mostly not garbage yet.
//
// Go initialises a package once everything it imports has been initialised,
// taking the first such package by import path at each step; this one
// imports only os and runtime/debug, so it runs long before the heavy
// packages (about half-way through the inits, at 1.6 MB allocated). The
// command's main package calls Restore from its own init, which runs after
// every package it imports: nothing but package initialisation runs with
// the collector off, in the binary and in its tests.
package initgc

import (
	"os"
	"runtime/debug"
)

// defaultPercent is the runtime's own GOGC default.
const defaultPercent = 100

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(-1)
	}
}

// Restore gives the collector back the setting it had before init: GOGC's,
// or the runtime's default.
func Restore() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultPercent)
	}
}

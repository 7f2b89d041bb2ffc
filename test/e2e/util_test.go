package e2e

import (
	"io"
	"log"
	"sort"
	"strconv"
)

func itoa(n int) string { return strconv.Itoa(n) }

func sortStrings(s []string) []string { sort.Strings(s); return s }

func nilLogger() *log.Logger { return log.New(io.Discard, "", 0) }

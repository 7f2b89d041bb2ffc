package checkproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A holder (a tenant) runs one helper at a time: its second render waits
// for its first, while another holder's render takes the other place. One
// tenant's slow cold renders so never hold every place.
func TestHolderRunsOneHelperAtATime(t *testing.T) {
	helper(t, "serve")
	hang := []Job{{Op: "hang", Input: json.RawMessage(`{}`)}}
	echo := []Job{{Op: "echo", Input: json.RawMessage(`{"a":1}`)}}

	first, stopFirst := context.WithCancel(WithHolder(context.Background(), "project team-a"))
	defer stopFirst()
	before := Spawns()
	done := make(chan struct{})
	go func() { Run(first, hang); close(done) }()
	for Spawns() == before {
		time.Sleep(10 * time.Millisecond)
	}

	second, cancel := context.WithTimeout(WithHolder(context.Background(), "project team-a"), 300*time.Millisecond)
	defer cancel()
	if _, err := Run(second, echo); err == nil || !strings.Contains(err.Error(), "it waited for another render of project team-a, which runs one at once") {
		t.Errorf("team-a's second render: %v", err)
	}

	other, cancel2 := context.WithTimeout(WithHolder(context.Background(), "project team-b"), time.Minute)
	defer cancel2()
	if res, err := Run(other, echo); err != nil || len(res) != 1 || res[0].Error != "" {
		t.Errorf("team-b's render waited behind team-a's: %v, %v", res, err)
	}
	stopFirst()
	<-done
	holders.Lock()
	left := len(holders.m)
	holders.Unlock()
	if left != 0 {
		t.Errorf("%d holders kept after their renders", left)
	}
}

// Fix words what to do about each failure once: nothing more for the
// lines that say it (missing, not executable, another build), memory for
// a killed helper, reinstalling for the rest (a breaker saw two fixes on
// one line, and "reinstall" for an out-of-memory kill).
func TestFix(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{ErrMissing, ""},
		{fmt.Errorf("wrapped: %w", ErrMissing), ""},
		{fixedError{errNotExecutable}, ""},
		{fixedError{errors.New("olm-cmp-check is from another build than olm-cmp: install both …")}, ""},
		{killedError{errors.New("olm-cmp-check was killed (out of memory, or by a signal) before answering")}, "give olm-cmp more memory"},
		{errors.New("olm-cmp-check stopped before answering (exit status 2)"), "install olm-cmp-check from the same build"},
	} {
		if got := Fix(c.err); c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("Fix(%v) = %q, want %q…", c.err, got, c.want)
		}
	}
}

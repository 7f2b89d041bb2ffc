package checkproc

import (
	"context"
	"encoding/json"
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

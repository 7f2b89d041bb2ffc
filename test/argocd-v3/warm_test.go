package argocdv3

import (
	"testing"

	_ "github.com/argoproj/argo-cd/v3/cmpserver"
	_ "github.com/argoproj/argo-cd/v3/cmpserver/apiclient"
	_ "github.com/argoproj/argo-cd/v3/cmpserver/plugin"
	_ "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	_ "github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	_ "github.com/argoproj/argo-cd/v3/reposerver/repository"
	_ "github.com/argoproj/argo-cd/v3/util/app/discovery"
	_ "github.com/argoproj/argo-cd/v3/util/cmp"
	_ "github.com/argoproj/argo-cd/v3/util/git"
	_ "github.com/argoproj/argo-cd/v3/util/io/path"
)

func TestWarm(t *testing.T) {}

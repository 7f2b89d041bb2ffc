package argocd

import (
	"testing"

	_ "github.com/argoproj/argo-cd/v2/cmpserver"
	_ "github.com/argoproj/argo-cd/v2/cmpserver/apiclient"
	_ "github.com/argoproj/argo-cd/v2/cmpserver/plugin"
	_ "github.com/argoproj/argo-cd/v2/pkg/apis/application/v1alpha1"
	_ "github.com/argoproj/argo-cd/v2/reposerver/apiclient"
	_ "github.com/argoproj/argo-cd/v2/reposerver/repository"
	_ "github.com/argoproj/argo-cd/v2/util/app/discovery"
	_ "github.com/argoproj/argo-cd/v2/util/cmp"
	_ "github.com/argoproj/argo-cd/v2/util/git"
	_ "github.com/argoproj/argo-cd/v2/util/io/path"
)

func TestWarm(t *testing.T) {}

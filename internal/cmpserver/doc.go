// Package cmpserver is the Argo CD config-management plugin transport: the
// ConfigManagementPluginService gRPC server on a unix socket (the native
// sidecar) and the classic mode's `generate`. It receives a repository,
// builds a render.Request from olm-cmp.yaml and the Application's
// environment, calls the engine, and sends the result; caching, rendering
// and JSON encoding live below it (internal/engine, internal/render).
package cmpserver

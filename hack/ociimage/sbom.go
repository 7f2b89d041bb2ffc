package ociimage

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"sort"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// SBOM is a CycloneDX 1.6 JSON document of the binaries' build info (what
// `go version -m` prints): the olm-cmp application, and every Go module
// linked into any platform's binary, with its version, its go.sum hash and a
// purl. It is written with CycloneDX's own Go library (cyclonedx-go): the
// format's types and encoder, not hand-made JSON. No serial number (it would
// be random) and epoch as its time, so two builds write the same bytes.
func SBOM(version string, epoch time.Time, infos []*buildinfo.BuildInfo) ([]byte, error) {
	if len(infos) == 0 {
		return nil, fmt.Errorf("SBOM: no binaries")
	}
	mods := map[string]*cdx.Component{}
	var goVersion string
	for _, bi := range infos {
		goVersion = bi.GoVersion
		for _, d := range bi.Deps {
			m := d
			if d.Replace != nil {
				m = d.Replace
			}
			ref := "pkg:golang/" + m.Path + "@" + m.Version
			c := &cdx.Component{
				BOMRef:     ref,
				Type:       cdx.ComponentTypeLibrary,
				Name:       m.Path,
				Version:    m.Version,
				PackageURL: ref + "?type=module",
			}
			if m.Sum != "" {
				c.Properties = &[]cdx.Property{{Name: "go:sum", Value: m.Sum}}
			}
			mods[ref] = c
		}
	}
	refs := make([]string, 0, len(mods))
	for r := range mods {
		refs = append(refs, r)
	}
	sort.Strings(refs)
	comps := make([]cdx.Component, 0, len(refs))
	for _, r := range refs {
		comps = append(comps, *mods[r])
	}
	main := infos[0].Main
	appRef := "pkg:golang/" + main.Path + "@" + version
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Timestamp: epoch.UTC().Format(time.RFC3339),
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{
			Type: cdx.ComponentTypeApplication, Name: "olm-cmp hack/ociimage (github.com/CycloneDX/cyclonedx-go)",
		}}},
		Component: &cdx.Component{
			BOMRef:     appRef,
			Type:       cdx.ComponentTypeApplication,
			Name:       main.Path,
			Version:    version,
			PackageURL: appRef + "?type=module",
			Properties: &[]cdx.Property{{Name: "go:version", Value: goVersion}},
		},
	}
	bom.Components = &comps
	bom.Dependencies = &[]cdx.Dependency{{Ref: appRef, Dependencies: &refs}}
	var buf bytes.Buffer
	enc := cdx.NewBOMEncoder(&buf, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	if err := enc.Encode(bom); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// sbomReferrer is the SBOM as an OCI artifact whose subject is the index:
// registries list it among the index's referrers (OCI 1.1; go-containerregistry
// pushes the referrers tag where a registry lacks the API).
func sbomReferrer(idx v1.ImageIndex, sbom []byte, epoch time.Time) (v1.Image, error) {
	desc, err := partial.Descriptor(idx)
	if err != nil {
		return nil, err
	}
	subject := v1.Descriptor{MediaType: desc.MediaType, Size: desc.Size, Digest: desc.Digest}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.MediaType(SBOMArtifactType))
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     static.NewLayer(sbom, types.MediaType(SBOMArtifactType)),
		MediaType: types.MediaType(SBOMArtifactType),
	})
	if err != nil {
		return nil, err
	}
	img = mutate.Annotations(img, map[string]string{
		"org.opencontainers.image.created": epoch.UTC().Format(time.RFC3339),
	}).(v1.Image)
	return mutate.Subject(img, subject).(v1.Image), nil
}

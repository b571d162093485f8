// Command kubecheck validates Kubernetes manifests offline against the
// Kubernetes API types: every YAML document of its input (files, or
// standard input) is decoded strictly into the typed object of its
// apiVersion and kind (k8s.io/api, and the Prometheus Operator's
// monitoring.coreos.com/v1), so an unknown or misspelt field, a value of the
// wrong type, a duplicated field or an unknown kind is an error. A few rules
// of the API server's validation that typing cannot express are checked on
// top (names — a Service's is a DNS-1123 label of at most 63 characters,
// as the API server requires — labels, selectors, container image
// references, ports, and the duration pattern of the monitoring.coreos.com
// CRDs).
//
// It is a module of its own so the router's go.mod does not carry the
// Kubernetes API types; deploy/deploy_test.go builds and runs it on the
// Helm chart's rendered manifests. Usage:
//
//	helm template deploy/helm/alertrouter | go run ./deploy/kubecheck
//
// (run from deploy/kubecheck: `go run . FILE...`). It prints one line per
// object checked and exits 1 when any object is invalid.
//
// `kubecheck kustomize DIR` prints what `kubectl kustomize DIR` prints,
// through the same kustomize library kubectl embeds (with kubectl's
// defaults: loads restricted to the kustomization's root, no plugins,
// legacy order), so the tests of deploy/kubernetes need no kubectl.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomize builds the kustomization in dir as `kubectl kustomize dir` does
// (kubectl's legacy order: namespaces, config and services before
// workloads).
func kustomize(dir string) ([]byte, error) {
	o := krusty.MakeDefaultOptions()
	o.Reorder = krusty.ReorderOptionLegacy
	m, err := krusty.MakeKustomizer(o).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, err
	}
	return m.AsYaml()
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "kustomize" {
		out, err := kustomize(os.Args[2])
		if err != nil {
			fmt.Fprintln(os.Stderr, "kubecheck kustomize:", err)
			os.Exit(1)
		}
		_, _ = os.Stdout.Write(out)
		return
	}
	var inputs []io.Reader
	names := os.Args[1:]
	if len(names) == 0 {
		inputs, names = []io.Reader{os.Stdin}, []string{"-"}
	}
	for _, n := range names {
		if n == "-" {
			continue
		}
		f, err := os.Open(n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kubecheck:", err)
			os.Exit(2)
		}
		defer f.Close()
		inputs = append(inputs, f)
	}
	bad := 0
	for i, in := range inputs {
		n, errs := check(in)
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "%s: %v\n", names[i], e)
		}
		bad += len(errs)
		fmt.Printf("%s: %d objects, %d errors\n", names[i], n, len(errs))
	}
	if bad > 0 {
		os.Exit(1)
	}
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme, rbacv1.AddToScheme, networkingv1.AddToScheme, monitoringv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// check decodes every document of in and returns how many objects it held
// and what is wrong with them.
func check(in io.Reader) (int, []error) {
	scheme := newScheme()
	strict := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{Yaml: true, Strict: true})
	r := utilyaml.NewYAMLReader(bufio.NewReader(in))
	var errs []error
	n := 0
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return n, errs
		}
		if err != nil {
			return n, append(errs, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		n++
		obj, gvk, err := strict.Decode(doc, nil, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("object %d: %w", n, err))
			continue
		}
		id := gvk.Kind
		if m, ok := obj.(metav1.Object); ok {
			id += "/" + m.GetName()
			for _, e := range checkMeta(m) {
				errs = append(errs, fmt.Errorf("%s: %w", id, e))
			}
		}
		for _, e := range checkObject(obj) {
			errs = append(errs, fmt.Errorf("%s: %w", id, e))
		}
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' && !bytes.Equal(t, []byte("---")) {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}

func checkMeta(m metav1.Object) []error {
	var errs []error
	if m.GetName() == "" {
		errs = append(errs, errors.New("metadata.name is empty"))
	}
	for _, e := range validation.IsDNS1123Subdomain(m.GetName()) {
		errs = append(errs, fmt.Errorf("metadata.name %q: %s", m.GetName(), e))
	}
	if ns := m.GetNamespace(); ns != "" {
		for _, e := range validation.IsDNS1123Label(ns) {
			errs = append(errs, fmt.Errorf("metadata.namespace %q: %s", ns, e))
		}
	}
	errs = append(errs, checkLabels("metadata.labels", m.GetLabels())...)
	for k := range m.GetAnnotations() {
		for _, e := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, fmt.Errorf("metadata.annotations key %q: %s", k, e))
		}
	}
	return errs
}

func checkLabels(where string, l map[string]string) []error {
	var errs []error
	for k, v := range l {
		for _, e := range validation.IsQualifiedName(k) {
			errs = append(errs, fmt.Errorf("%s key %q: %s", where, k, e))
		}
		for _, e := range validation.IsValidLabelValue(v) {
			errs = append(errs, fmt.Errorf("%s[%s] = %q: %s", where, k, v, e))
		}
	}
	return errs
}

// selectsTemplate checks a workload's selector is valid and selects its own
// pod template, as the API server requires.
func selectsTemplate(sel *metav1.LabelSelector, tmpl corev1.PodTemplateSpec) []error {
	if sel == nil {
		return []error{errors.New("spec.selector is missing")}
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return []error{fmt.Errorf("spec.selector: %w", err)}
	}
	if s.Empty() {
		return []error{errors.New("spec.selector is empty")}
	}
	if !s.Matches(labels.Set(tmpl.Labels)) {
		return []error{fmt.Errorf("spec.selector %s does not select the pod template's labels %v", s, tmpl.Labels)}
	}
	return checkLabels("spec.template.metadata.labels", tmpl.Labels)
}

func checkPod(spec corev1.PodSpec) []error {
	var errs []error
	if len(spec.Containers) == 0 {
		errs = append(errs, errors.New("pod has no containers"))
	}
	vols := map[string]bool{}
	for _, v := range spec.Volumes {
		for _, e := range validation.IsDNS1123Label(v.Name) {
			errs = append(errs, fmt.Errorf("volume %q: %s", v.Name, e))
		}
		if vols[v.Name] {
			// The API server: spec.volumes[].name: Duplicate value.
			errs = append(errs, fmt.Errorf("volume %q is defined twice", v.Name))
		}
		vols[v.Name] = true
	}
	for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
		for _, e := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, fmt.Errorf("container %q: %s", c.Name, e))
		}
		if c.Image == "" {
			errs = append(errs, fmt.Errorf("container %q has no image", c.Name))
		} else if !imageRef.MatchString(c.Image) {
			// The API server takes any image string; the kubelet then
			// fails the pod with InvalidImageName (e.g. repo:sha256:…,
			// a digest written as a tag).
			errs = append(errs, fmt.Errorf("container %q image %q is not a valid image reference (name[:tag][@algorithm:digest])", c.Name, c.Image))
		}
		ports := map[string]bool{}
		for _, p := range c.Ports {
			for _, e := range validation.IsValidPortNum(int(p.ContainerPort)) {
				errs = append(errs, fmt.Errorf("container %q port %d: %s", c.Name, p.ContainerPort, e))
			}
			if p.Name != "" {
				for _, e := range validation.IsValidPortName(p.Name) {
					errs = append(errs, fmt.Errorf("container %q port name %q: %s", c.Name, p.Name, e))
				}
				ports[p.Name] = true
			}
		}
		paths := map[string]bool{}
		for _, m := range c.VolumeMounts {
			if !vols[m.Name] {
				errs = append(errs, fmt.Errorf("container %q mounts volume %q, which the pod does not define", c.Name, m.Name))
			}
			// The API server: volumeMounts[].mountPath must be unique.
			p := path.Clean(m.MountPath)
			if paths[p] {
				errs = append(errs, fmt.Errorf("container %q mounts two volumes at %s (mountPath must be unique)", c.Name, p))
			}
			paths[p] = true
		}
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
			if p != nil && p.HTTPGet != nil && p.HTTPGet.Port.Type == 1 && !ports[p.HTTPGet.Port.StrVal] {
				errs = append(errs, fmt.Errorf("container %q probes named port %q, which it does not declare", c.Name, p.HTTPGet.Port.StrVal))
			}
		}
	}
	return errs
}

var (
	// imageRef is the grammar of a container image reference (the
	// distribution/reference package's): [host[:port]/]path[:tag][@digest].
	imageRef = regexp.MustCompile(`^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)?` +
		`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*` +
		`(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?` +
		`(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$`)
	// promDuration is the pattern of monitoring.coreos.com/v1 Duration
	// (the CRD's OpenAPI validation, which the Go type does not carry).
	promDuration = regexp.MustCompile(`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)
)

func checkObject(obj runtime.Object) []error {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return append(selectsTemplate(o.Spec.Selector, o.Spec.Template), checkPod(o.Spec.Template.Spec)...)
	case *appsv1.StatefulSet:
		return append(selectsTemplate(o.Spec.Selector, o.Spec.Template), checkPod(o.Spec.Template.Spec)...)
	case *corev1.Service:
		var errs []error
		// A Service's name becomes a DNS label (<name>.<namespace>.svc):
		// the API server takes at most 63 characters of a DNS-1123 label,
		// not the 253 of a subdomain other kinds may have.
		for _, e := range validation.IsDNS1123Label(o.Name) {
			errs = append(errs, fmt.Errorf("metadata.name %q of a Service: %s", o.Name, e))
		}
		if len(o.Spec.Ports) == 0 && o.Spec.Type != corev1.ServiceTypeExternalName {
			errs = append(errs, errors.New("service has no ports"))
		}
		for _, p := range o.Spec.Ports {
			for _, e := range validation.IsValidPortNum(int(p.Port)) {
				errs = append(errs, fmt.Errorf("port %d: %s", p.Port, e))
			}
		}
		return append(errs, checkLabels("spec.selector", o.Spec.Selector)...)
	case *policyv1.PodDisruptionBudget:
		if (o.Spec.MinAvailable == nil) == (o.Spec.MaxUnavailable == nil) {
			return []error{errors.New("set exactly one of spec.minAvailable and spec.maxUnavailable")}
		}
		if _, err := metav1.LabelSelectorAsSelector(o.Spec.Selector); err != nil || o.Spec.Selector == nil {
			return []error{fmt.Errorf("spec.selector: invalid or missing (%v)", err)}
		}
	case *corev1.ConfigMap:
		for k := range o.Data {
			for _, e := range validation.IsConfigMapKey(k) {
				return []error{fmt.Errorf("data key %q: %s", k, e)}
			}
		}
	case *corev1.Secret:
		for k := range o.StringData {
			for _, e := range validation.IsConfigMapKey(k) {
				return []error{fmt.Errorf("stringData key %q: %s", k, e)}
			}
		}
	case *monitoringv1.ServiceMonitor:
		if len(o.Spec.Endpoints) == 0 {
			return []error{errors.New("spec.endpoints is empty")}
		}
		var errs []error
		for i, ep := range o.Spec.Endpoints {
			for what, d := range map[string]monitoringv1.Duration{"interval": ep.Interval, "scrapeTimeout": ep.ScrapeTimeout} {
				if d != "" && !promDuration.MatchString(string(d)) {
					errs = append(errs, fmt.Errorf("spec.endpoints[%d].%s %q is not a Prometheus duration (e.g. 30s, 1m30s)", i, what, d))
				}
			}
		}
		return errs
	case *networkingv1.NetworkPolicy:
		var errs []error
		if _, err := metav1.LabelSelectorAsSelector(&o.Spec.PodSelector); err != nil {
			errs = append(errs, fmt.Errorf("spec.podSelector: %w", err))
		}
		for i, r := range o.Spec.Ingress {
			for j, p := range r.From {
				if p.PodSelector == nil && p.NamespaceSelector == nil && p.IPBlock == nil {
					errs = append(errs, fmt.Errorf("spec.ingress[%d].from[%d]: set podSelector, namespaceSelector or ipBlock", i, j))
				}
				for _, sel := range []*metav1.LabelSelector{p.PodSelector, p.NamespaceSelector} {
					if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
						errs = append(errs, fmt.Errorf("spec.ingress[%d].from[%d]: %w", i, j, err))
					}
				}
			}
		}
		return errs
	case *monitoringv1.PrometheusRule:
		if len(o.Spec.Groups) == 0 {
			return []error{errors.New("spec.groups is empty")}
		}
	}
	return nil
}

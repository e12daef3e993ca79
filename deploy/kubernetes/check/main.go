// Command check reads the Kubernetes manifests of deploy/kubernetes/ with Kubernetes' own API types
// and prints what each pod of the StatefulSet would run, so that a test can run those processes
// without a cluster (test/interop/scaleout/kubernetes_statefulset.sh).
//
// Usage: go run . FILE.yaml... > pods.json
//
// Contract:
//   - Every document is decoded strictly into its kind's type (ConfigMap, Secret, Service,
//     StatefulSet): an unknown or misspelt field, a wrong type or another kind is an error naming
//     the file and the document.
//   - The StatefulSet is checked for what Kubernetes would refuse or what would leave the pods
//     broken: a selector that does not match the template's labels, a serviceName that no headless
//     Service of the files has, a volumeMount of no volume, a ConfigMap or Secret the files do not
//     define, a $(VAR) in the args that no env entry defines, a container without image.
//   - On success it prints one JSON object: {"pods": [{"name", "args", "env", "mounts"}...]} for
//     ordinals 0..replicas-1, with $(VAR) expanded as the kubelet does (env entries in order,
//     $$ for a literal $), fieldRef metadata.name as the pod name, envFrom secrets resolved from
//     the files, and each mount as {"path", "configMap"|"emptyDir"}. Exit 1 with the reasons
//     otherwise.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

type manifests struct {
	configMaps   map[string]corev1.ConfigMap
	secrets      map[string]corev1.Secret
	services     map[string]corev1.Service
	statefulSets []appsv1.StatefulSet
}

type mount struct {
	Path      string            `json:"path"`
	ConfigMap map[string]string `json:"configMap,omitempty"`
	EmptyDir  bool              `json:"emptyDir,omitempty"`
}

type pod struct {
	Name   string            `json:"name"`
	Args   []string          `json:"args"`
	Env    map[string]string `json:"env"`
	Mounts []mount           `json:"mounts"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: check FILE.yaml...")
		os.Exit(2)
	}
	m := manifests{map[string]corev1.ConfigMap{}, map[string]corev1.Secret{},
		map[string]corev1.Service{}, nil}
	var errs []string
	for _, file := range os.Args[1:] {
		errs = append(errs, m.read(file)...)
	}
	if len(m.statefulSets) != 1 {
		errs = append(errs, fmt.Sprintf("want exactly one StatefulSet in the files, found %d",
			len(m.statefulSets)))
	}
	if len(errs) == 0 {
		pods, more := m.pods(m.statefulSets[0])
		errs = append(errs, more...)
		if len(errs) == 0 {
			out, _ := json.MarshalIndent(map[string][]pod{"pods": pods}, "", "  ")
			fmt.Println(string(out))
			return
		}
	}
	for _, e := range errs {
		fmt.Fprintln(os.Stderr, "check:", e)
	}
	os.Exit(1)
}

// read decodes every document of file strictly by its kind.
func (m *manifests) read(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return []string{err.Error()}
	}
	var errs []string
	for i, doc := range splitDocuments(data) {
		where := fmt.Sprintf("%s, document %d", file, i+1)
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		var target interface{}
		var cm corev1.ConfigMap
		var secret corev1.Secret
		var svc corev1.Service
		var sts appsv1.StatefulSet
		switch head.APIVersion + " " + head.Kind {
		case "v1 ConfigMap":
			target = &cm
		case "v1 Secret":
			target = &secret
		case "v1 Service":
			target = &svc
		case "apps/v1 StatefulSet":
			target = &sts
		default:
			errs = append(errs, fmt.Sprintf("%s: unexpected apiVersion/kind %q %q", where,
				head.APIVersion, head.Kind))
			continue
		}
		if err := yaml.UnmarshalStrict(doc, target); err != nil {
			errs = append(errs, fmt.Sprintf("%s (%s): %v", where, head.Kind, err))
			continue
		}
		switch head.Kind {
		case "ConfigMap":
			m.configMaps[cm.Name] = cm
		case "Secret":
			m.secrets[secret.Name] = secret
		case "Service":
			m.services[svc.Name] = svc
		case "StatefulSet":
			m.statefulSets = append(m.statefulSets, sts)
		}
	}
	return errs
}

// splitDocuments splits a YAML stream at its "---" lines, dropping documents of comments only.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	for _, part := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		content := false
		for _, line := range strings.Split(part, "\n") {
			t := strings.TrimSpace(line)
			if t != "" && !strings.HasPrefix(t, "#") {
				content = true
			}
		}
		if content {
			docs = append(docs, bytes.TrimSpace([]byte(part)))
		}
	}
	return docs
}

var varRef = regexp.MustCompile(`\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`)

// expand replaces $(NAME) by env[NAME] as the kubelet does; an undefined name is reported.
func expand(s string, env map[string]string, undefined *[]string) string {
	return varRef.ReplaceAllStringFunc(s, func(ref string) string {
		if ref == "$$" {
			return "$"
		}
		name := ref[2 : len(ref)-1]
		if v, ok := env[name]; ok {
			return v
		}
		*undefined = append(*undefined, name)
		return ref
	})
}

// pods checks sts against the other manifests and returns what each of its pods runs.
func (m *manifests) pods(sts appsv1.StatefulSet) ([]pod, []string) {
	var errs []string
	where := "StatefulSet " + sts.Name
	spec := sts.Spec
	if spec.Selector == nil || len(spec.Selector.MatchLabels) == 0 {
		errs = append(errs, where+": spec.selector.matchLabels is empty")
	} else {
		for k, v := range spec.Selector.MatchLabels {
			if spec.Template.Labels[k] != v {
				errs = append(errs, fmt.Sprintf("%s: selector %s=%s does not match the pod "+
					"template's labels", where, k, v))
			}
		}
	}
	if svc, ok := m.services[spec.ServiceName]; !ok {
		errs = append(errs, fmt.Sprintf("%s: serviceName %q is no Service of the files", where,
			spec.ServiceName))
	} else if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		errs = append(errs, fmt.Sprintf("%s: Service %q is not headless (clusterIP: None)", where,
			svc.Name))
	}
	if len(spec.Template.Spec.Containers) != 1 {
		errs = append(errs, fmt.Sprintf("%s: want one container, found %d", where,
			len(spec.Template.Spec.Containers)))
		return nil, errs
	}
	c := spec.Template.Spec.Containers[0]
	if c.Image == "" {
		errs = append(errs, where+": the container has no image")
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	replicas := int32(1)
	if spec.Replicas != nil {
		replicas = *spec.Replicas
	}
	var pods []pod
	for ordinal := int32(0); ordinal < replicas; ordinal++ {
		p := pod{Name: fmt.Sprintf("%s-%d", sts.Name, ordinal), Env: map[string]string{}}
		for _, from := range c.EnvFrom {
			if from.SecretRef == nil {
				errs = append(errs, where+": envFrom other than secretRef is not read by check")
				continue
			}
			secret, ok := m.secrets[from.SecretRef.Name]
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: envFrom secret %q is not in the files", where,
					from.SecretRef.Name))
				continue
			}
			for k, v := range secret.StringData {
				p.Env[k] = v
			}
			for k, v := range secret.Data {
				p.Env[k] = string(v)
			}
		}
		var undefined []string
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
				p.Env[e.Name] = expand(e.Value, p.Env, &undefined)
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				p.Env[e.Name] = p.Name
			default:
				errs = append(errs, fmt.Sprintf("%s: env %s: only values and fieldRef "+
					"metadata.name are read by check", where, e.Name))
			}
		}
		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			p.Args = append(p.Args, expand(a, p.Env, &undefined))
		}
		for _, name := range undefined {
			errs = append(errs, fmt.Sprintf("%s: $(%s) is used but no env entry defines it",
				where, name))
		}
		for _, vm := range c.VolumeMounts {
			v, ok := volumes[vm.Name]
			switch {
			case !ok:
				errs = append(errs, fmt.Sprintf("%s: volumeMount %q names no volume", where,
					vm.Name))
			case v.ConfigMap != nil:
				cm, ok := m.configMaps[v.ConfigMap.Name]
				if !ok {
					errs = append(errs, fmt.Sprintf("%s: volume %q: ConfigMap %q is not in the "+
						"files", where, v.Name, v.ConfigMap.Name))
					continue
				}
				p.Mounts = append(p.Mounts, mount{Path: vm.MountPath, ConfigMap: cm.Data})
			case v.EmptyDir != nil:
				p.Mounts = append(p.Mounts, mount{Path: vm.MountPath, EmptyDir: true})
			default:
				errs = append(errs, fmt.Sprintf("%s: volume %q: only configMap and emptyDir "+
					"volumes are read by check", where, v.Name))
			}
		}
		pods = append(pods, p)
		if len(errs) > 0 {
			break
		}
	}
	return pods, errs
}

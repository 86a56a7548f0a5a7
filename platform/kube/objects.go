package kube

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/engine"
)

// Labels every object of a run carries: cleanup finds a killed run's
// objects by them, and a user's kubectl get -l too.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelStudy     = "tierbench.io/study"
	LabelRun       = "tierbench.io/run"
	LabelRole      = "tierbench.io/role"
	LabelComponent = "tierbench.io/component"
	managedBy      = "tierbench"
)

// Roles of a run's pods (LabelRole).
const (
	RoleEngine = "engine"
	RoleDriver = "driver"
)

// Keys of the run's Secret: the password, and the engine's file that
// holds it (engine.Container.PasswordFile).
const (
	secretKey     = "password"
	secretFileKey = "file"
)

// driverUID runs the load generator's container: not root, and not a uid
// an image is likely to give a user of its own.
const driverUID = 65532

// Object is one Kubernetes object as its JSON (apiVersion, kind,
// metadata, spec): tierbench writes the few fields it sets rather than
// linking every API group's Go types.
type Object map[string]any

// Kind is the object's kind ("Pod").
func (o Object) Kind() string { s, _ := o["kind"].(string); return s }

// Name is the object's metadata.name.
func (o Object) Name() string { s, _ := o.meta()["name"].(string); return s }

func (o Object) meta() map[string]any { m, _ := o["metadata"].(map[string]any); return m }

// Claim is one placed component's volume: a claim from its tier's class.
type Claim struct {
	Component, Tier, Class string
	// VolumeMode is Filesystem (the default) or Block.
	VolumeMode string
	// Size is the claim's request in bytes.
	Size int64
}

// RunSpec is what a run on a cluster is made of.
type RunSpec struct {
	Study, Run, Namespace string
	// Engine names the engine; Server is how it runs (engine.Containerizer).
	Engine string
	Server engine.Container
	Claims []Claim
	// Image is the image with tierbench in it, for the load generator.
	Image string
	// Drive are `tierbench drive`'s arguments but --engine and --target.
	Drive []string
}

// Names of a run's objects: all start with tb-RUN (an id starting with a
// digit is not a valid Service name).
func (r RunSpec) name(suffix string) string {
	n := "tb-" + r.Run
	if suffix != "" {
		n += "-" + suffix
	}
	return n
}

// EngineService is the Service name the load generator connects to.
func (r RunSpec) EngineService() string { return r.name(RoleEngine) }

// EnginePod and DriverJob name the run's engine pod and driver Job.
func (r RunSpec) EnginePod() string { return r.name(RoleEngine) }
func (r RunSpec) DriverJob() string { return r.name(RoleDriver) }

// Selector selects every object of the run.
func (r RunSpec) Selector() string { return LabelRun + "=" + r.Run }

func (r RunSpec) labels(role string, more ...string) map[string]any {
	l := map[string]any{LabelManagedBy: managedBy, LabelStudy: r.Study, LabelRun: r.Run}
	if role != "" {
		l[LabelRole] = role
	}
	for i := 0; i+1 < len(more); i += 2 {
		l[more[i]] = more[i+1]
	}
	return l
}

func (r RunSpec) object(apiVersion, kind, name string, labels map[string]any) Object {
	return Object{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": r.Namespace, "labels": labels}}
}

// ClaimName is a component's claim: component names may hold "_",
// which object names may not.
func (r RunSpec) ClaimName(component string) string {
	return r.name(strings.ReplaceAll(component, "_", "-"))
}

// Anchor is the run's ConfigMap: it says what the run is, and every
// other object of the run names it as its owner, so deleting it takes the
// rest with it on a cluster with a garbage collector.
func (r RunSpec) Anchor() Object {
	o := r.object("v1", "ConfigMap", r.name(""), r.labels(""))
	o["data"] = map[string]any{"study": r.Study, "run": r.Run, "engine": r.Engine}
	return o
}

// Objects are the run's objects but its anchor, in the order they are
// created: the password's Secret, the claims, the engine's pod, Service
// and NetworkPolicy, and the load generator's Job. password fills the
// Secret (render: a fresh one per run).
func (r RunSpec) Objects(password string) []Object {
	secret := r.object("v1", "Secret", r.name("secret"), r.labels(""))
	secret["type"] = "Opaque"
	data := map[string]any{secretKey: password}
	if r.Server.PasswordFile != "" {
		data[secretFileKey] = fmt.Sprintf(r.Server.PasswordFileText, password)
	}
	secret["stringData"] = data
	out := []Object{secret}
	for _, c := range r.Claims {
		out = append(out, r.claim(c))
	}
	return append(out, r.enginePod(), r.service(), r.networkPolicy(), r.driverJob())
}

func (r RunSpec) claim(c Claim) Object {
	o := r.object("v1", "PersistentVolumeClaim", r.ClaimName(c.Component), r.labels("", LabelComponent, c.Component))
	mode := c.VolumeMode
	if mode == "" {
		mode = "Filesystem"
	}
	o["spec"] = map[string]any{
		"storageClassName": c.Class,
		"volumeMode":       mode,
		"accessModes":      []any{"ReadWriteOnce"},
		"resources":        map[string]any{"requests": map[string]any{"storage": fmt.Sprint(c.Size)}},
	}
	return o
}

func (r RunSpec) secretEnv(name string) map[string]any {
	return map[string]any{"name": name, "valueFrom": map[string]any{
		"secretKeyRef": map[string]any{"name": r.name("secret"), "key": secretKey}}}
}

func (r RunSpec) enginePod() Object {
	s := r.Server
	o := r.object("v1", "Pod", r.EnginePod(), r.labels(RoleEngine))
	var env []any
	for _, e := range s.Env {
		env = append(env, map[string]any{"name": e.Name, "value": e.Value})
	}
	if s.PasswordEnv != "" {
		env = append(env, r.secretEnv(s.PasswordEnv))
	}
	var mounts, devices, volumes []any
	for _, c := range r.Claims {
		vol := strings.ReplaceAll(c.Component, "_", "-")
		volumes = append(volumes, map[string]any{"name": vol,
			"persistentVolumeClaim": map[string]any{"claimName": r.ClaimName(c.Component)}})
		if c.VolumeMode == "Block" {
			devices = append(devices, map[string]any{"name": vol, "devicePath": s.Mounts[c.Component]})
		} else {
			mounts = append(mounts, map[string]any{"name": vol, "mountPath": s.Mounts[c.Component]})
		}
	}
	container := map[string]any{
		"name": r.Engine, "image": s.Image, "args": toAny(s.Args), "env": env,
		"ports": []any{map[string]any{"containerPort": s.Port, "name": "server"}},
		"readinessProbe": map[string]any{"exec": map[string]any{"command": toAny(s.ReadyCommand)},
			"periodSeconds": 2, "failureThreshold": 3},
		"securityContext": map[string]any{"allowPrivilegeEscalation": false},
	}
	if len(mounts) > 0 {
		container["volumeMounts"] = mounts
	}
	if len(devices) > 0 {
		container["volumeDevices"] = devices
	}
	if s.PasswordFile != "" {
		volumes = append(volumes, map[string]any{"name": "secret", "secret": map[string]any{
			"secretName": r.name("secret"), "defaultMode": 0o400,
			"items": []any{map[string]any{"key": secretFileKey, "path": baseName(s.PasswordFile)}}}})
		container["volumeMounts"] = append(mounts, map[string]any{"name": "secret", "mountPath": dirName(s.PasswordFile), "readOnly": true})
	}
	o["spec"] = map[string]any{
		// A server that dies fails the run; it is not restarted behind
		// the measurement's back.
		"restartPolicy":                "Never",
		"automountServiceAccountToken": false,
		"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": s.User, "runAsGroup": s.FSGroup,
			"fsGroup": s.FSGroup},
		"containers": []any{container},
		"volumes":    volumes,
	}
	return o
}

func (r RunSpec) service() Object {
	o := r.object("v1", "Service", r.EngineService(), r.labels(RoleEngine))
	o["spec"] = map[string]any{
		"type":     "ClusterIP",
		"selector": map[string]any{LabelRun: r.Run, LabelRole: RoleEngine},
		"ports":    []any{map[string]any{"name": "server", "port": r.Server.Port, "targetPort": r.Server.Port}},
	}
	return o
}

// networkPolicy admits the run's load generator to the engine and no one
// else (on a cluster whose network plugin enforces policies; the
// password holds on every cluster).
func (r RunSpec) networkPolicy() Object {
	o := r.object("networking.k8s.io/v1", "NetworkPolicy", r.name(RoleEngine), r.labels(RoleEngine))
	o["spec"] = map[string]any{
		"podSelector": map[string]any{"matchLabels": map[string]any{LabelRun: r.Run, LabelRole: RoleEngine}},
		"policyTypes": []any{"Ingress"},
		"ingress": []any{map[string]any{
			"from":  []any{map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{LabelRun: r.Run, LabelRole: RoleDriver}}}},
			"ports": []any{map[string]any{"port": r.Server.Port, "protocol": "TCP"}},
		}},
	}
	return o
}

// DriverTarget is the URL `tierbench drive` connects to: the engine's
// Service, without the password (which reaches it in the environment).
func (r RunSpec) DriverTarget() string {
	return strings.Replace(r.Server.Target, engine.TargetHost, r.EngineService(), 1)
}

func (r RunSpec) driverJob() Object {
	o := r.object("batch/v1", "Job", r.DriverJob(), r.labels(RoleDriver))
	args := append([]string{"drive", "--engine", r.Engine, "--target", r.DriverTarget()}, r.Drive...)
	o["spec"] = map[string]any{
		// One attempt: a failed load generator fails the run.
		"backoffLimit": 0,
		"template": map[string]any{
			"metadata": map[string]any{"labels": r.labels(RoleDriver)},
			"spec": map[string]any{
				"restartPolicy":                "Never",
				"automountServiceAccountToken": false,
				"securityContext":              map[string]any{"runAsNonRoot": true, "runAsUser": driverUID, "runAsGroup": driverUID},
				"containers": []any{map[string]any{
					"name": "drive", "image": r.Image, "command": []any{"tierbench"}, "args": toAny(args),
					"env":             []any{r.secretEnv("TIERBENCH_TARGET_PASSWORD")},
					"securityContext": map[string]any{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true},
				}},
			},
		},
	}
	return o
}

// SetOwner makes the object owned by the run's anchor (uid: the anchor's,
// once created).
func SetOwner(o Object, anchor Object, uid string) {
	o.meta()["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"name": anchor.Name(), "uid": uid}}
}

// Labels returns the object's labels.
func (o Object) Labels() map[string]string {
	out := map[string]string{}
	l, _ := o.meta()["labels"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(l)) {
		out[k], _ = l[k].(string)
	}
	return out
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func baseName(p string) string { return p[strings.LastIndex(p, "/")+1:] }
func dirName(p string) string  { return p[:max(strings.LastIndex(p, "/"), 1)] }

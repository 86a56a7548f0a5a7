package kube

import (
	"encoding/base64"
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
	// Claims are the placed components the server mounts.
	Claims []Claim
	// Image is the image with tierbench in it, for the load generator.
	Image string
	// Drive are `tierbench drive`'s arguments but --engine and --target.
	Drive []string
	// Client, when set, is the load generator instead of tierbench drive:
	// the engine's own client (engine.ClientContainerizer).
	Client *engine.Container
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

// EngineService is the Service name the load generator connects to (and,
// for a cluster engine, its StatefulSet's).
func (r RunSpec) EngineService() string { return r.name(RoleEngine) }

// EnginePods names the engine's pods: one, or a cluster engine's nodes.
func (r RunSpec) EnginePods() []string {
	if r.Server.Nodes == 0 {
		return []string{r.name(RoleEngine)}
	}
	out := make([]string, r.Server.Nodes)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", r.name(RoleEngine), i)
	}
	return out
}

// DriverJob names the run's load generator's Job.
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

// ClaimNames are a component's claims: one, or one per node of a cluster
// engine (its StatefulSet's, named after the claim template). Component
// names may hold "_", which object names may not.
func (r RunSpec) ClaimNames(component string) []string {
	vol := volumeName(component)
	if r.Server.Nodes == 0 {
		return []string{r.name(vol)}
	}
	var out []string
	for _, p := range r.EnginePods() {
		out = append(out, vol+"-"+p)
	}
	return out
}

func volumeName(component string) string { return strings.ReplaceAll(component, "_", "-") }

// Anchor is the run's ConfigMap: it says what the run is, and every
// other object of the run names it as its owner, so deleting it takes the
// rest with it on a cluster with a garbage collector.
func (r RunSpec) Anchor() Object {
	o := r.object("v1", "ConfigMap", r.name(""), r.labels(""))
	o["data"] = map[string]any{"study": r.Study, "run": r.Run, "engine": r.Engine}
	return o
}

// Objects are the run's objects but its anchor, in the order they are
// created: the password's Secret, the files the containers read, the
// claims, the engine's pod (or a cluster engine's StatefulSet), Service
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
	if files := r.files(); files != nil {
		out = append(out, files)
	}
	if r.Server.Nodes > 0 {
		return append(out, r.engineSet(), r.service(), r.networkPolicy(), r.driverJob())
	}
	for _, c := range r.Claims {
		out = append(out, r.claim(r.name(volumeName(c.Component)), c))
	}
	return append(out, r.enginePod(), r.service(), r.networkPolicy(), r.driverJob())
}

func (r RunSpec) claim(name string, c Claim) Object {
	o := r.object("v1", "PersistentVolumeClaim", name, r.labels("", LabelComponent, c.Component))
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

// filesKey is a file's key in the files ConfigMap: its path under
// FilesDir, with "/" (which keys may not hold) as "_".
func filesKey(rel string) string { return strings.ReplaceAll(rel, "/", "_") }

// files is the ConfigMap of the files the engine's and the client's
// containers read, or nil when they read none.
func (r RunSpec) files() Object {
	all := map[string]any{}
	for _, c := range r.containers() {
		for rel, b := range c.Files {
			all[filesKey(rel)] = base64.StdEncoding.EncodeToString(b)
		}
	}
	if len(all) == 0 {
		return nil
	}
	o := r.object("v1", "ConfigMap", r.name("files"), r.labels(""))
	o["binaryData"] = all
	return o
}

func (r RunSpec) containers() []engine.Container {
	if r.Client != nil {
		return []engine.Container{r.Server, *r.Client}
	}
	return []engine.Container{r.Server}
}

func (r RunSpec) secretEnv(name string) map[string]any {
	return map[string]any{"name": name, "valueFrom": map[string]any{
		"secretKeyRef": map[string]any{"name": r.name("secret"), "key": secretKey}}}
}

// container is c as a pod's container named name, and the volumes it
// needs but its claims: its password file, files and scratch folder.
func (r RunSpec) container(name string, c engine.Container) (container map[string]any, volumes []any) {
	var env []any
	for _, e := range c.Env {
		if e.Field != "" {
			env = append(env, map[string]any{"name": e.Name, "valueFrom": map[string]any{"fieldRef": map[string]any{"fieldPath": e.Field}}})
		} else {
			env = append(env, map[string]any{"name": e.Name, "value": e.Value})
		}
	}
	if c.PasswordEnv != "" {
		env = append(env, r.secretEnv(c.PasswordEnv))
	}
	container = map[string]any{"name": name, "image": c.Image, "args": toAny(c.Args),
		"securityContext":          map[string]any{"allowPrivilegeEscalation": false},
		"terminationMessagePolicy": "FallbackToLogsOnError"}
	if len(env) > 0 {
		container["env"] = env
	}
	if len(c.Command) > 0 {
		container["command"] = toAny(c.Command)
	}
	if c.MemoryLimit > 0 {
		// Request and limit alike: the engine is scheduled where its
		// memory is, and its page cache is charged to the same limit.
		m := fmt.Sprint(c.MemoryLimit)
		container["resources"] = map[string]any{"requests": map[string]any{"memory": m}, "limits": map[string]any{"memory": m}}
	} else if c.MemoryRequest > 0 {
		container["resources"] = map[string]any{"requests": map[string]any{"memory": fmt.Sprint(c.MemoryRequest)}}
	}
	var mounts []any
	if c.PasswordFile != "" {
		volumes = append(volumes, map[string]any{"name": "secret", "secret": map[string]any{
			"secretName": r.name("secret"), "defaultMode": 0o400,
			"items": []any{map[string]any{"key": secretFileKey, "path": baseName(c.PasswordFile)}}}})
		mounts = append(mounts, map[string]any{"name": "secret", "mountPath": dirName(c.PasswordFile), "readOnly": true})
	}
	if len(c.Files) > 0 {
		var items []any
		for _, rel := range slices.Sorted(maps.Keys(c.Files)) {
			items = append(items, map[string]any{"key": filesKey(rel), "path": rel})
		}
		volumes = append(volumes, map[string]any{"name": "files", "configMap": map[string]any{
			"name": r.name("files"), "defaultMode": 0o444, "items": items}})
		mounts = append(mounts, map[string]any{"name": "files", "mountPath": c.FilesDir, "readOnly": true})
	}
	if c.Scratch != "" {
		volumes = append(volumes, map[string]any{"name": "scratch", "emptyDir": map[string]any{}})
		mounts = append(mounts, map[string]any{"name": "scratch", "mountPath": c.Scratch})
	}
	if len(mounts) > 0 {
		container["volumeMounts"] = mounts
	}
	return container, volumes
}

// enginePodSpec is the engine's pod: its container with each claim
// mounted where the engine expects it. claimVolumes adds the claims as
// volumes (a StatefulSet's come from its claim templates instead).
func (r RunSpec) enginePodSpec(restartPolicy string, claimVolumes bool) map[string]any {
	s := r.Server
	container, volumes := r.container(r.Engine, s)
	var devices []any
	mounts, _ := container["volumeMounts"].([]any)
	for _, c := range r.Claims {
		vol := volumeName(c.Component)
		if claimVolumes {
			volumes = append(volumes, map[string]any{"name": vol,
				"persistentVolumeClaim": map[string]any{"claimName": r.name(vol)}})
		}
		if c.VolumeMode == "Block" {
			devices = append(devices, map[string]any{"name": vol, "devicePath": s.Mounts[c.Component]})
		} else {
			mounts = append(mounts, map[string]any{"name": vol, "mountPath": s.Mounts[c.Component]})
		}
	}
	if len(mounts) > 0 {
		container["volumeMounts"] = mounts
	}
	if len(devices) > 0 {
		container["volumeDevices"] = devices
	}
	var ports []any
	for i, p := range append([]int{s.Port}, s.PeerPorts...) {
		ports = append(ports, map[string]any{"containerPort": p, "name": fmt.Sprintf("server-%d", i)})
	}
	container["ports"] = ports
	probe := map[string]any{"periodSeconds": 2, "failureThreshold": 3}
	if len(s.ReadyCommand) > 0 {
		probe["exec"] = map[string]any{"command": toAny(s.ReadyCommand)}
	} else {
		probe["tcpSocket"] = map[string]any{"port": s.Port}
	}
	container["readinessProbe"] = probe
	spec := map[string]any{
		"restartPolicy":                restartPolicy,
		"automountServiceAccountToken": false,
		"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": s.User, "runAsGroup": s.FSGroup,
			"fsGroup": s.FSGroup},
		"containers": []any{container},
	}
	if len(volumes) > 0 {
		spec["volumes"] = volumes
	}
	return spec
}

func (r RunSpec) enginePod() Object {
	o := r.object("v1", "Pod", r.EnginePods()[0], r.labels(RoleEngine))
	// A server that dies fails the run; it is not restarted behind the
	// measurement's back.
	o["spec"] = r.enginePodSpec("Never", true)
	return o
}

// engineSet is a cluster engine's nodes: a StatefulSet whose pods start
// together, each with its own claims (deleted with it), spread over the
// cluster's hosts where it can.
func (r RunSpec) engineSet() Object {
	o := r.object("apps/v1", "StatefulSet", r.EngineService(), r.labels(RoleEngine))
	spec := r.enginePodSpec("Always", false) // the only policy a StatefulSet allows; the runner fails a run whose node restarted
	mine := map[string]any{LabelRun: r.Run, LabelRole: RoleEngine}
	spec["affinity"] = map[string]any{"podAntiAffinity": map[string]any{
		"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"weight": 100,
			"podAffinityTerm": map[string]any{"topologyKey": "kubernetes.io/hostname",
				"labelSelector": map[string]any{"matchLabels": mine}}}}}}
	var templates []any
	for _, c := range r.Claims {
		claim := r.claim(volumeName(c.Component), c)
		delete(claim.meta(), "namespace")
		templates = append(templates, map[string]any{"metadata": claim["metadata"], "spec": claim["spec"]})
	}
	o["spec"] = map[string]any{
		"serviceName": r.EngineService(),
		"replicas":    r.Server.Nodes,
		// One node at a time, each once the one before listens. Started
		// together, each of Ignite's nodes may find no peer yet (their
		// names resolve once their pods have addresses) and start a
		// cluster of its own (seen in real pods: 1 of 3 joined).
		"podManagementPolicy":                  "OrderedReady",
		"selector":                             map[string]any{"matchLabels": mine},
		"template":                             map[string]any{"metadata": map[string]any{"labels": r.labels(RoleEngine)}, "spec": spec},
		"volumeClaimTemplates":                 templates,
		"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Delete", "whenScaled": "Delete"},
	}
	return o
}

func (r RunSpec) ports() []int { return append([]int{r.Server.Port}, r.Server.PeerPorts...) }

// service reaches the engine: a cluster engine's is headless, so each
// node has a name (before it is ready: nodes find each other to start).
func (r RunSpec) service() Object {
	o := r.object("v1", "Service", r.EngineService(), r.labels(RoleEngine))
	var ports []any
	for i, p := range r.ports() {
		ports = append(ports, map[string]any{"name": fmt.Sprintf("server-%d", i), "port": p, "targetPort": p})
	}
	spec := map[string]any{
		"type":     "ClusterIP",
		"selector": map[string]any{LabelRun: r.Run, LabelRole: RoleEngine},
		"ports":    ports,
	}
	if r.Server.Nodes > 0 {
		spec["clusterIP"] = "None"
		spec["publishNotReadyAddresses"] = true
	}
	o["spec"] = spec
	return o
}

// networkPolicy admits the run's load generator to the engine and, for a
// cluster engine, its nodes to each other; no one else (on a cluster
// whose network plugin enforces policies; the password holds on every
// cluster, for an engine that has one).
func (r RunSpec) networkPolicy() Object {
	o := r.object("networking.k8s.io/v1", "NetworkPolicy", r.name(RoleEngine), r.labels(RoleEngine))
	from := []any{map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{LabelRun: r.Run, LabelRole: RoleDriver}}}}
	if r.Server.Nodes > 0 {
		from = append(from, map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{LabelRun: r.Run, LabelRole: RoleEngine}}})
	}
	var ports []any
	for _, p := range r.ports() {
		ports = append(ports, map[string]any{"port": p, "protocol": "TCP"})
	}
	o["spec"] = map[string]any{
		"podSelector": map[string]any{"matchLabels": map[string]any{LabelRun: r.Run, LabelRole: RoleEngine}},
		"policyTypes": []any{"Ingress"},
		"ingress":     []any{map[string]any{"from": from, "ports": ports}},
	}
	return o
}

// DriverTarget is the URL `tierbench drive` connects to: the engine's
// Service, without the password (which reaches it in the environment).
// The host is the Service's address from the variable Kubernetes gives
// every pod made after the Service (NAME_SERVICE_HOST), expanded by the
// kubelet in the container's arguments: a cluster without DNS (a node of
// tierbench cluster up) reaches it too.
func (r RunSpec) DriverTarget() string {
	host := "$(" + strings.ToUpper(strings.ReplaceAll(r.EngineService(), "-", "_")) + "_SERVICE_HOST)"
	return strings.Replace(r.Server.Target, engine.TargetHost, host, 1)
}

// driverContainer is the load generator: tierbench drive in the
// tierbench image, or the engine's own client.
func (r RunSpec) driverContainer() (map[string]any, []any) {
	if r.Client != nil {
		return r.container(DriverContainer, *r.Client)
	}
	// --wait: rendered objects start the engine and the load generator
	// together; the runner starts it once the engine is ready.
	args := append([]string{"drive", "--engine", r.Engine, "--target", r.DriverTarget(), "--wait", "5m"}, r.Drive...)
	c := map[string]any{
		"name": DriverContainer, "image": r.Image, "command": []any{"tierbench"}, "args": toAny(args),
		"securityContext": map[string]any{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true},
		// A failed drive's last lines (its error) become the pod's
		// termination message, which the run's failure quotes.
		"terminationMessagePolicy": "FallbackToLogsOnError",
	}
	// The password, for an engine that has one (OpenSearch has none: a
	// user in its URL is refused).
	if r.Server.PasswordEnv != "" || r.Server.PasswordFile != "" {
		c["env"] = []any{r.secretEnv("TIERBENCH_TARGET_PASSWORD")}
	}
	return c, nil
}

// DriverContainer names the load generator's container, whose log is the
// run's stream.
const DriverContainer = "drive"

func (r RunSpec) driverJob() Object {
	o := r.object("batch/v1", "Job", r.DriverJob(), r.labels(RoleDriver))
	container, volumes := r.driverContainer()
	user := int64(driverUID)
	if r.Client != nil {
		user = r.Client.User
	}
	spec := map[string]any{
		"restartPolicy":                "Never",
		"automountServiceAccountToken": false,
		"securityContext":              map[string]any{"runAsNonRoot": true, "runAsUser": user, "runAsGroup": user},
		"containers":                   []any{container},
	}
	if len(volumes) > 0 {
		spec["volumes"] = volumes
	}
	o["spec"] = map[string]any{
		// One attempt: a failed load generator fails the run.
		"backoffLimit": 0,
		"template":     map[string]any{"metadata": map[string]any{"labels": r.labels(RoleDriver)}, "spec": spec},
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

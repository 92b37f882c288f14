# Signal classification (the platform CR's signalProcessing.policy.configMapName, key policy.rego).
# Input: signal {name, severity, type, source, labels, annotations}, target {apiVersion, kind, name, namespace},
# kubernetesContext {namespace {name, labels, annotations}, workload {kind, name, labels, annotations}, ownerChain[]},
# detectedLabels {gitOpsManaged, gitOpsTool, hpaEnabled, pdbProtected, helmManaged}.
# Output (data.signalprocessing): environment, priority (P0..P3), criticality (Critical|High|Medium|Low),
# actionable (false completes the request with NoActionRequired, without analysis).
# This default reproduces the platform's built-in behaviour: the alert's own labels win, then the namespace's.
package signalprocessing

import rego.v1

namespace_labels := object.get(input, ["kubernetesContext", "namespace", "labels"], {})
workload_labels := object.get(input, ["kubernetesContext", "workload", "labels"], {})
signal_labels := object.get(input, ["signal", "labels"], {})

default environment := "unknown"

environment := signal_labels.environment if {
	signal_labels.environment != ""
} else := namespace_labels["kubemend.io/environment"] if {
	namespace_labels["kubemend.io/environment"] != ""
} else := namespace_labels.environment if {
	namespace_labels.environment != ""
}

severity_priority := {"critical": "P0", "high": "P1", "warning": "P2", "info": "P3"}

default priority := "P2"

priority := signal_labels.priority if {
	signal_labels.priority != ""
} else := namespace_labels["kubemend.io/priority"] if {
	namespace_labels["kubemend.io/priority"] != ""
} else := p if {
	p := severity_priority[input.signal.severity]
}

priority_criticality := {"P0": "Critical", "P1": "High", "P2": "Medium", "P3": "Low"}

default criticality := "Medium"

criticality := workload_labels["kubemend.io/criticality"] if {
	workload_labels["kubemend.io/criticality"] in {"Critical", "High", "Medium", "Low"}
} else := namespace_labels["kubemend.io/criticality"] if {
	namespace_labels["kubemend.io/criticality"] in {"Critical", "High", "Medium", "Low"}
} else := c if {
	c := priority_criticality[priority]
}

default actionable := true

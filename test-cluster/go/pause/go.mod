module agentplane.local/test-cluster/pause

go 1.26.0

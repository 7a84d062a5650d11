# arrayburn on every Nomad client whose meta says so, as a sysbatch job
# (one run per node, to its end). The check is read-only:
#
#   nomad node meta apply -node-id NODE arrayburn=check
#   nomad job run contrib/nomad/arrayburn.nomad.hcl
#
# A burn-in (DESTRUCTIVE: every byte of the disks `devices` names is
# overwritten) is asked for in so many words, on nodes whose meta says so:
#
#   nomad node meta apply -node-id NODE arrayburn=burnin
#   nomad job run -var mode=burnin -var destroy_disks=yes contrib/nomad/arrayburn.nomad.hcl
#
# It runs with --resume-or-start: a task restarted (a client restarted, the
# node rebooted) continues from its checkpoint in /var/lib/arrayburn/burnin;
# one that has ended leaves NODE/burnin.done and is not run again.
#
# What it needs: the raw_exec driver enabled on the clients (plugin
# "raw_exec" { config { enabled = true } }), which runs as the client's
# user (root: raw reads and writes of /dev), and arrayburn at
# /usr/local/bin/arrayburn. Disks are named by id, never /dev/sdX;
# arrayburn's refusals hold (a disk in use is never written).
#
# Results, per node: /var/lib/arrayburn/results/NODE/MODE-STAMP.json (and
# .ocp.jsonl); metrics in node_exporter's textfile directory. Gather the
# nodes' results/ under one directory and run `arrayburn report DIR`. The
# task succeeds whatever the disks' verdict (0, 1 and 3 are results); it
# fails when arrayburn refuses (exit 2) or breaks.

variable "mode" {
  type        = string
  default     = "check"
  description = "check (read-only) or burnin (destroys the disks' data)"
}

variable "destroy_disks" {
  type        = string
  default     = "no"
  description = "yes, for mode=burnin: every byte of the disks is overwritten"
}

variable "devices" {
  type        = string
  default     = "/dev/disk/by-id/ata-* /dev/disk/by-id/scsi-3* /dev/disk/by-id/nvme-eui.*"
  description = "the disks by id, as the shell expands them on each node"
}

variable "arrayburn_args" {
  type    = string
  default = ""
}

job "arrayburn" {
  type        = "sysbatch"
  datacenters = ["*"]

  constraint {
    attribute = "${meta.arrayburn}"
    value     = var.mode
  }

  group "disks" {
    restart {
      attempts = 3
      delay    = "30s"
      mode     = "fail"
    }

    task "arrayburn" {
      driver       = "raw_exec"
      kill_signal  = "SIGTERM"
      kill_timeout = "120s"

      env {
        NODE_NAME      = "${node.unique.name}"
        MODE           = var.mode
        DESTROY_DISKS  = var.destroy_disks
        DEVICES        = var.devices
        ARRAYBURN      = "/usr/local/bin/arrayburn"
        ARRAYBURN_ARGS = var.arrayburn_args
        RESULTS        = "/var/lib/arrayburn/results"
        STATE          = "/var/lib/arrayburn/burnin"
        METRICS        = "/var/lib/node_exporter/textfile_collector/arrayburn-${var.mode}.prom"
      }

      config {
        command = "/bin/sh"
        args = ["-c", <<-EOT
          set -u
          out="$RESULTS/$NODE_NAME"
          mkdir -p "$out" "$STATE" "$(dirname "$METRICS")" || exit 2
          stamp=$(date -u +%Y%m%dT%H%M%SZ)
          # Each disk once (a disk has a link per id), no partitions.
          set --
          seen=" "
          for d in $DEVICES; do
            case "$d" in *-part[0-9]*) continue ;; esac
            [ -e "$d" ] || continue
            r=$(readlink -f "$d")
            case "$seen" in *" $r "*) continue ;; esac
            seen="$seen$r "
            set -- "$@" "$d"
          done
          if [ $# -eq 0 ]; then
            echo "arrayburn: no disk on $NODE_NAME matches DEVICES=$DEVICES" >&2
            exit 2
          fi
          # Nomad stops a task with SIGTERM to this shell: each run is
          # started in the background and the signal handed on, so that
          # arrayburn ends writing its partial result (a burn-in: its
          # checkpoint, resumed when the task starts again).
          case "$MODE" in
          check)
            pid=; trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
            "$ARRAYBURN" check --progress lines $ARRAYBURN_ARGS \
              --json "$out/check-$stamp.json" --ocp-diag "$out/check-$stamp.ocp.jsonl" \
              --metrics "$METRICS" "$@" &
            pid=$!
            wait "$pid"; rc=$?
            while kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done ;;
          burnin)
            if [ "$DESTROY_DISKS" != yes ]; then
              echo "arrayburn: mode=burnin destroys every byte of $*: add -var destroy_disks=yes" >&2
              exit 2
            fi
            if [ -e "$out/burnin.done" ]; then
              echo "arrayburn: the burn-in on $NODE_NAME has ended ($(cat "$out/burnin.done")); not run again"
              exit 0
            fi
            pid=; trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
            "$ARRAYBURN" burnin --resume-or-start --destructive --yes --progress lines \
              --state "$STATE" $ARRAYBURN_ARGS --json "$out/burnin-$stamp.json" \
              --ocp-diag "$out/burnin-$stamp.ocp.jsonl" --metrics "$METRICS" "$@" &
            pid=$!
            wait "$pid"; rc=$?
            while kill -0 "$pid" 2>/dev/null; do wait "$pid"; rc=$?; done
            case $rc in 0|1|3) echo "$stamp exit $rc" > "$out/burnin.done" ;; esac ;;
          *)
            echo "arrayburn: mode=$MODE: give check or burnin" >&2
            exit 2 ;;
          esac
          case $rc in 0|1|3) exit 0 ;; *) exit $rc ;; esac
        EOT
        ]
      }

      resources {
        cpu    = 500
        memory = 256
      }
    }
  }
}

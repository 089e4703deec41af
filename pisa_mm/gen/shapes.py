"""The classic shapes as named cycles (diy7's spelling; Z6.0/Z6.3 as diy names them)."""

from __future__ import annotations

SHAPES: dict[str, str] = {
    "MP": "PodWW Rfe PodRR Fre",
    "SB": "PodWR Fre PodWR Fre",
    "LB": "PodRW Rfe PodRW Rfe",
    "IRIW": "Rfe PodRR Fre Rfe PodRR Fre",
    "WRC": "Rfe PodRW Rfe PodRR Fre",
    "ISA2": "PodWW Rfe PodRW Rfe PodRR Fre",
    "2+2W": "PodWW Coe PodWW Coe",
    "R": "PodWW Coe PodWR Fre",
    "S": "PodWW Rfe PodRW Coe",
    "RWC": "Rfe PodRR Fre PodWR Fre",
    "W+RWC": "PodWW Rfe PodRR Fre PodWR Fre",
    "Z6.0": "PodWW Rfe PodRW Coe PodWR Fre",
    "Z6.3": "PodWW Coe PodWW Rfe PodRR Fre",
    "CoRR": "Rfe PosRR Fre",
    "CoWW": "PosWW Coi",
    "CoRW1": "PosRW Rfi",
    "CoRW2": "Rfe PosRW Coe",
    "CoWR": "PosWR Fre Coe",
}

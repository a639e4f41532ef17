#!/usr/bin/env bash
# Installs the real applications and anomaly generators of the labelled training suite
# (jobs/training/): Debian's own packages with their example inputs, nothing built here.
#   lammps            molecular dynamics (its bench/in.lj, in.eam, in.chain inputs)
#   gromacs           molecular dynamics, another code (a box of SPC water made with its own tools)
#   hpcc              dense linear algebra, FFT, STREAM, RandomAccess (HPC Challenge)
#   nwchem            electronic structure (Gaussian-basis SCF and DFT; its basis-set library)
#   openfoam          CFD (its tutorials: icoFoam on the lid-driven cavity)
#   python3-numpy     the numpy application (data analysis in Python)
#   bwa               the bwa application (read alignment; reads and reference generated)
#   povray            the povray application (povray-examples' benchmark scene, povray-includes)
#   zstd              the archive application (sort, tar and zstd on generated text)
#   ffmpeg            the transcode application (its own generated test picture and tone)
#   gcc make libc6-dev the build application (generated C sources, compiled and linked)
#   stockfish         the chess application (its own benchmark positions)
#   sqlite3           the database application (a generated table)
#   xz-utils openssl  the compress and crypto applications
#   imagemagick octave r-base-core  the image, octave and rstats applications
#   stress-ng         the anomaly generators that match HPAS's behaviours (see jobs/training/README.md)
# Knobs: SKIP_APT_UPDATE=1 skips apt-get update.
set -euo pipefail
packages=(lammps gromacs hpcc nwchem openfoam stress-ng openmpi-bin
  python3-numpy bwa povray povray-examples povray-includes zstd bc ffmpeg gcc make libc6-dev
  stockfish sqlite3 xz-utils openssl imagemagick octave r-base-core)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "training applications: all installed"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
[ "${SKIP_APT_UPDATE:-0}" = 1 ] || apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "training applications: installed ${missing[*]}"

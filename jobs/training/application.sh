#!/bin/bash
# application.sh APP SECONDS: runs the real application APP on all of the job's CPUs, again and
# again, until SECONDS have passed (a job of several nodes: one MPI rank per task, across its nodes) (each application's example input is short, so a run of the
# suite is as long as the suite asks). Inputs are made in the current directory from the files
# Debian's packages ship; nothing is downloaded.
#   lammps    molecular dynamics: Lennard-Jones melt (LAMMPS' bench/in.lj), 32,000 atoms, MPI
#   gromacs   molecular dynamics: a 4-nm box of SPC water made with gmx solvate, thread-MPI
#   hpcc      HPC Challenge: HPL, DGEMM, STREAM, PTRANS, RandomAccess, FFT in turn, MPI
#   nwchem    electronic structure: B3LYP/6-31G* on benzene, MPI
#   openfoam  CFD: icoFoam on the lid-driven cavity (the tutorial's case, a finer mesh), MPI
# Shapes other than MPI simulation (issue 70: a suite that looks like production):
#   numpy     data analysis in Python: 12 hours of 24-channel sensor data per task, filtered by FFT,
#             summarised per minute and correlated; one worker process per CPU (multiprocessing)
#   bwa       bioinformatics: BWA-MEM aligning generated 100-bp reads (1 % errors) to a generated
#             4-Mbp reference, one thread per CPU, the alignments written as SAM
#   povray    rendering: POV-Ray's own benchmark scene (povray-examples), one thread per CPU
#   archive   an I/O-heavy tool: 170 MB of generated text sorted on disk (GNU sort, small buffer,
#             temporary files), archived with tar and zstd, unpacked again, flushed to disk
#   sweep     a serial parameter sweep: one single-threaded Python process after another, each a
#             Monte Carlo estimate for one parameter, on one CPU of the node whatever it has
#   transcode media encoding: FFmpeg's generated test picture and tone encoded with x264 and AAC
#             to an MP4 file, one encoder thread per CPU
#   build     a software build: 160 generated C files compiled by make and gcc -O2, one compiler
#             per CPU, linked, then cleaned for the next build
#   chess     a game-tree search: Stockfish's own benchmark positions searched to depth 17, one
#             search thread per CPU, a 256-MB hash table
#   database  an embedded database: SQLite builds a table of 3 million generated rows on disk,
#             indexes it, aggregates and joins it, updates a tenth of it; one thread
#   compress  data compression: 60 MB of generated base64 text compressed by xz at level 6 with
#             up to one thread per CPU (xz's threads take 24-MB blocks: three here), then
#             decompressed and checked
#   crypto    cryptography: OpenSSL's speed benchmark (SHA-256, AES-256-CBC, RSA-2048, ECDSA
#             P-256) in one process per CPU
#   image     image processing: ImageMagick draws a 2000 x 2000 fractal picture, blurs, enlarges,
#             rotates and sharpens it, writes it as PNG, then finds its edges into a JPEG; one
#             OpenMP thread per CPU
#   octave    an interpreted numerical script: GNU Octave solves a dense 2500 x 2500 system, takes
#             its LU factors, eigenvalues, an SVD and FFTs of generated data; one process
#   rstats    statistics in R: a bootstrap of a linear model on a million generated rows and
#             grouped quantiles, the replicates forked over one worker per CPU (parallel)
set -u
app=$1
seconds=$2
# A job of several nodes runs one rank per task over all of them (mpirun starts the other nodes'
# ranks through srun); a job of one node one rank per CPU of it.
if [ "${SLURM_JOB_NUM_NODES:-1}" -gt 1 ]; then ranks=${SLURM_NTASKS:-$SLURM_JOB_NUM_NODES}
else ranks=${SLURM_CPUS_ON_NODE:-$(nproc)}; fi
deadline=$(( $(date +%s) + seconds ))
mpi=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks")
left() { echo $(( deadline - $(date +%s) )); }

case "$app" in
lammps)
  cat > in.lj <<'IN'
variable x index 1
variable y index 1
variable z index 1
variable xx equal 20*$x
variable yy equal 20*$y
variable zz equal 20*$z
units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 ${xx} 0 ${yy} 0 ${zz}
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 1.44 87287 loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
neigh_modify delay 0 every 20 check no
fix 1 all nve
run 2000
IN
  run() { "${mpi[@]}" lmp -in in.lj -log none -screen none; }
  ;;
gromacs)
  cat > md.mdp <<'IN'
integrator = md
dt = 0.002
nsteps = -1
cutoff-scheme = Verlet
coulombtype = PME
rcoulomb = 1.0
rvdw = 1.0
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 300
constraints = h-bonds
nstxout-compressed = 0
nstenergy = 1000
nstlog = 1000
IN
  gmx -quiet solvate -cs spc216.gro -box 4 4 4 -o water.gro >/dev/null 2>&1
  waters=$(( ($(wc -l < water.gro) - 3) / 3 ))
  printf '#include "oplsaa.ff/forcefield.itp"\n#include "oplsaa.ff/spc.itp"\n[ system ]\nwater\n[ molecules ]\nSOL %s\n' \
    "$waters" > topol.top
  gmx -quiet grompp -f md.mdp -c water.gro -p topol.top -o md.tpr -maxwarn 2 >/dev/null 2>&1
  # mdrun stops by itself before -maxh (hours) has passed.
  run() { gmx -quiet mdrun -nt "$ranks" -s md.tpr -maxh "$(echo "$(left) / 3600" | bc -l)" >/dev/null 2>&1; }
  ;;
hpcc)
  # The example input with one problem size that fits a run in tens of seconds on two cores.
  cat > hpccinf.txt <<IN
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
4000         Ns
1            # of NBs
128          NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
$ranks       Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200 10000 30000                values of N
0                               number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64        values of NB
IN
  run() { rm -f hpccoutf.txt; "${mpi[@]}" hpcc >/dev/null 2>&1; }
  ;;
nwchem)
  cat > benzene.nw <<'IN'
start benzene
memory total 400 mb
geometry units angstrom noautoz
  C  0.000  1.396 0.0
  C  1.209  0.698 0.0
  C  1.209 -0.698 0.0
  C  0.000 -1.396 0.0
  C -1.209 -0.698 0.0
  C -1.209  0.698 0.0
  H  0.000  2.479 0.0
  H  2.147  1.240 0.0
  H  2.147 -1.240 0.0
  H  0.000 -2.479 0.0
  H -2.147 -1.240 0.0
  H -2.147  1.240 0.0
end
basis
  * library 6-31G*
end
dft
  xc b3lyp
  direct
end
task dft energy
IN
  run() { rm -f benzene.*[!w]; "${mpi[@]}" nwchem benzene.nw >/dev/null 2>&1; }
  ;;
openfoam)
  # Where Debian's OpenFOAM finds its own etc/controlDict (its bashrc needs tools Debian leaves out).
  export WM_PROJECT_DIR=/usr/share/openfoam
  mkdir -p cavity/system cavity/constant cavity/0
  header() { printf 'FoamFile { version 2.0; format ascii; class %s; object %s; }\n' "$1" "$2"; }
  { header dictionary blockMeshDict; cat <<'IN'
convertToMeters 0.1;
vertices ((0 0 0) (1 0 0) (1 1 0) (0 1 0) (0 0 0.1) (1 0 0.1) (1 1 0.1) (0 1 0.1));
blocks (hex (0 1 2 3 4 5 6 7) (200 200 1) simpleGrading (1 1 1));
edges ();
boundary (
  movingWall { type wall; faces ((3 7 6 2)); }
  fixedWalls { type wall; faces ((0 4 7 3) (2 6 5 1) (1 5 4 0)); }
  frontAndBack { type empty; faces ((0 3 2 1) (4 5 6 7)); }
);
IN
  } > cavity/system/blockMeshDict
  { header dictionary controlDict; cat <<'IN'
application icoFoam; startFrom startTime; startTime 0; stopAt endTime; endTime 0.5;
deltaT 0.0005; writeControl timeStep; writeInterval 100000; purgeWrite 1; writeFormat binary;
writePrecision 6; writeCompression off; timeFormat general; timePrecision 6; runTimeModifiable false;
IN
  } > cavity/system/controlDict
  { header dictionary fvSchemes; cat <<'IN'
ddtSchemes { default Euler; } gradSchemes { default Gauss linear; grad(p) Gauss linear; }
divSchemes { default none; div(phi,U) Gauss linear; } laplacianSchemes { default Gauss linear orthogonal; }
interpolationSchemes { default linear; } snGradSchemes { default orthogonal; }
IN
  } > cavity/system/fvSchemes
  { header dictionary fvSolution; cat <<'IN'
solvers { p { solver PCG; preconditioner DIC; tolerance 1e-06; relTol 0.05; }
  pFinal { $p; relTol 0; } U { solver smoothSolver; smoother symGaussSeidel; tolerance 1e-05; relTol 0; } }
PISO { nCorrectors 2; nNonOrthogonalCorrectors 0; pRefCell 0; pRefValue 0; }
IN
  } > cavity/system/fvSolution
  { header dictionary decomposeParDict; echo "numberOfSubdomains $ranks; method simple; coeffs { n ($ranks 1 1); }"; } > cavity/system/decomposeParDict
  { header dictionary transportProperties; echo "nu 0.01;"; } > cavity/constant/transportProperties
  { header volVectorField U; cat <<'IN'
dimensions [0 1 -1 0 0 0 0]; internalField uniform (0 0 0);
boundaryField { movingWall { type fixedValue; value uniform (1 0 0); }
  fixedWalls { type noSlip; } frontAndBack { type empty; } }
IN
  } > cavity/0/U
  { header volScalarField p; cat <<'IN'
dimensions [0 2 -2 0 0 0 0]; internalField uniform 0;
boundaryField { movingWall { type zeroGradient; } fixedWalls { type zeroGradient; } frontAndBack { type empty; } }
IN
  } > cavity/0/p
  (cd cavity && blockMesh >/dev/null 2>&1 && decomposePar -force >/dev/null 2>&1)
  run() { (cd cavity && rm -rf processor*/[1-9]* processor*/0.* && "${mpi[@]}" icoFoam -parallel >/dev/null 2>&1); }
  ;;
numpy)
  cat > analysis.py <<'PY'
import multiprocessing, os, sys
import numpy as np
def day(seed):
    # 12 hours of 24 channels at 20 Hz: drift, a daily cycle, noise and spikes.
    rng = np.random.default_rng(seed)
    n = 24 * 3600 * 20 // 2
    t = np.arange(n) / 20.0
    x = (np.sin(2 * np.pi * t / 86400.0)[:, None] + 0.01 * np.cumsum(rng.standard_normal((n, 24)), axis=0)
         + rng.standard_normal((n, 24)))
    x[rng.random((n, 24)) < 1e-4] += 50.0
    spec = np.fft.rfft(x, axis=0)
    spec[int(0.2 * spec.shape[0]):] = 0
    clean = np.fft.irfft(spec, n=n, axis=0)
    minutes = clean[: n - n % 1200].reshape(-1, 1200, 24)
    stats = np.stack([minutes.mean(1), minutes.std(1), np.percentile(minutes, 95, axis=1)])
    corr = np.corrcoef(clean.T)
    order = np.argsort(clean[:, 0])
    return float(stats.sum() + corr.sum() + order[0])
if __name__ == "__main__":
    workers = int(sys.argv[1])
    with multiprocessing.Pool(workers) as pool:
        pool.map(day, range(workers * 4), chunksize=1)
PY
  # One worker per CPU while the node's memory holds them (up to about 1 GB each, 1.5 GB kept
  # per worker), and one BLAS thread per worker rather than one per CPU in each.
  workers=$(awk -v r="$ranks" '/^MemAvailable:/ { w = int($2 / 1500000); print (w < r ? (w < 1 ? 1 : w) : r) }' /proc/meminfo)
  run() { OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 analysis.py "$workers"; }
  ;;
bwa)
  /usr/bin/python3 - <<'PY'
import random
random.seed(7)
ref = "".join(random.choice("ACGT") for _ in range(4_000_000))
with open("ref.fa", "w") as f:
    f.write(">chr1\n")
    for i in range(0, len(ref), 80):
        f.write(ref[i:i + 80] + "\n")
flip = {"A": "CGT", "C": "AGT", "G": "ACT", "T": "ACG"}
with open("reads.fq", "w") as f:
    for r in range(150_000):
        p = random.randrange(len(ref) - 100)
        read = [b if random.random() > 0.01 else random.choice(flip[b]) for b in ref[p:p + 100]]
        f.write(f"@r{r}\n{''.join(read)}\n+\n{'I' * 100}\n")
PY
  bwa index ref.fa >/dev/null 2>&1
  run() { bwa mem -t "$ranks" ref.fa reads.fq > aligned.sam 2>/dev/null; }
  ;;
povray)
  cp /usr/share/doc/povray/examples/advanced/benchmark/benchmark.pov .
  run() { povray +Ibenchmark.pov +Orender.png -D +W256 +H192 +WT"$ranks" +L/usr/share/povray-3.7/include >/dev/null 2>&1; }
  ;;
archive)
  # Text with the repetition of real records: sortable and compressible, made once per job.
  /usr/bin/python3 - <<'PY'
import random
random.seed(3)
words = ["".join(random.choice("abcdefghij") for _ in range(8)) for _ in range(5000)]
with open("records.txt", "w") as f:
    for i in range(6_000_000):
        f.write(f"{random.choice(words)} {random.randrange(10**9):09d} {random.choice(words)}\n")
PY
  run() {
    mkdir -p sorttmp unpacked
    sort --parallel="$ranks" -S 32M -T sorttmp records.txt -o sorted.txt
    tar cf - sorted.txt records.txt | zstd -q -T"$ranks" -3 -f -o records.tar.zst
    zstd -q -d -c records.tar.zst | tar xf - -C unpacked
    sync
    rm -rf sorted.txt records.tar.zst unpacked sorttmp
  }
  ;;
sweep)
  cat > point.py <<'PY'
import random, sys
# One parameter of the sweep: a 2-D Ising model's magnetisation by Metropolis sampling.
beta = float(sys.argv[1])
random.seed(int(beta * 1000))
import math
n = 32
s = [[1] * n for _ in range(n)]
m = 0
for sweep in range(1500):
    for _ in range(n * n):
        i, j = random.randrange(n), random.randrange(n)
        h = s[(i + 1) % n][j] + s[i - 1][j] + s[i][(j + 1) % n] + s[i][j - 1]
        d = 2 * s[i][j] * h
        if d <= 0 or random.random() < math.exp(-beta * d):
            s[i][j] = -s[i][j]
    m += abs(sum(map(sum, s)))
print(beta, m / 1500 / n / n)
PY
  # LC_ALL=C: a site's locale would print "0,20", which Python does not read.
  run() { for b in $(LC_ALL=C seq 0.20 0.02 0.70); do /usr/bin/python3 point.py "$b" >> sweep.txt; done; }
  ;;
transcode)
  run() {
    ffmpeg -nostdin -loglevel error -y -f lavfi -i testsrc2=size=1280x720:rate=30 \
      -f lavfi -i sine=frequency=440:sample_rate=48000 -t 40 \
      -c:v libx264 -preset medium -threads "$ranks" -c:a aac movie.mp4
  }
  ;;
build)
  # A project of 160 translation units, each with loops the optimiser works at, and a Makefile.
  /usr/bin/python3 - <<'PY'
import os, random
random.seed(11)
os.makedirs("src", exist_ok=True)
for f in range(160):
    with open(f"src/unit{f}.c", "w") as out:
        out.write("#include <stddef.h>\n")
        for g in range(30):
            a, b, c = random.randrange(2, 99), random.randrange(2, 99), random.randrange(2, 9)
            out.write(f"double unit{f}_f{g}(const double *x, size_t n) {{\n"
                      f"  double s = 0;\n  for (size_t i = 0; i < n; i++) {{\n"
                      f"    double v = x[i] * {a}.0 + {b}.0;\n"
                      f"    for (int k = 0; k < {c}; k++) v = v * 0.5 + (double)(i % {a});\n"
                      f"    s += v / (1.0 + x[(i * {b}) % n]);\n  }}\n  return s;\n}}\n")
with open("src/main.c", "w") as out:
    out.write("int main(void) { return 0; }\n")
with open("Makefile", "w") as out:
    out.write("SRC := $(wildcard src/*.c)\nOBJ := $(SRC:.c=.o)\n"
              "program: $(OBJ)\n\tgcc -o $@ $^\n"
              "%.o: %.c\n\tgcc -O2 -c $< -o $@\n"
              "clean:\n\trm -f program src/*.o\n")
PY
  run() { make -s -j"$ranks" program && make -s clean; }
  ;;
chess)
  run() { /usr/games/stockfish bench 256 "$ranks" 17 default depth > /dev/null 2>&1; }
  ;;
database)
  run() {
    rm -f rows.db rows.db-wal rows.db-shm
    sqlite3 rows.db <<'SQL' > /dev/null
PRAGMA journal_mode=WAL;
CREATE TABLE r(id INTEGER PRIMARY KEY, k INTEGER, v REAL, s TEXT);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000000)
  INSERT INTO r SELECT i, abs(random()) % 20000, random() / 1e12, hex(randomblob(24)) FROM c;
CREATE INDEX rk ON r(k);
SELECT count(*), sum(v) FROM (SELECT k, avg(v) AS v FROM r GROUP BY k);
SELECT count(*) FROM r a JOIN r b ON a.k = b.k AND a.id < b.id WHERE a.id % 97 = 0;
UPDATE r SET v = v * 2 WHERE id % 10 = 0;
SQL
  }
  ;;
compress)
  head -c 45000000 /dev/urandom | base64 > data.txt
  run() { xz -6 -T"$ranks" -k -f data.txt && xz -d -c data.txt.xz | cmp - data.txt; }
  ;;
crypto)
  run() { openssl speed -multi "$ranks" -seconds 3 sha256 aes-256-cbc rsa2048 ecdsap256 > /dev/null 2>&1; }
  ;;
image)
  run() {
    MAGICK_THREAD_LIMIT=$ranks convert -seed 7 -size 2000x2000 plasma:fractal -blur 0x6 \
      -resize 150% -rotate 17 -unsharp 0x2 picture.png &&
    MAGICK_THREAD_LIMIT=$ranks convert picture.png -colorspace Gray -edge 2 -resize 50% edges.jpg
  }
  ;;
octave)
  cat > work.m <<'M'
n = 2500; A = rand(n) + n * eye(n); b = rand(n, 1);
x = A \ b; [L, U, P] = lu(A); e = eig(A(1:1000, 1:1000)); s = svd(rand(1200));
f = fft(rand(2^20, 8));
printf("%g\n", norm(A * x - b) + sum(abs(e)) + sum(s) + sum(abs(f(:))));
M
  run() { octave-cli --no-gui --quiet work.m > /dev/null; }
  ;;
rstats)
  cat > work.R <<'R'
library(parallel)
workers <- as.integer(commandArgs(TRUE)[1])
set.seed(5); n <- 1000000
x <- cbind(1, matrix(rnorm(n * 10), n)); y <- x %*% runif(11) + rnorm(n)
boot <- mclapply(seq_len(20 * workers), function(r) {
  set.seed(r); i <- sample(n, replace = TRUE); coef(lm.fit(x[i, ], y[i]))
}, mc.cores = workers)
d <- data.frame(g = sample(letters, n, TRUE), v = rnorm(n))
a <- aggregate(v ~ g, d, quantile, probs = c(0.05, 0.5, 0.95))
cat(sum(unlist(boot)), nrow(a), "\n")
R
  run() { Rscript work.R "$ranks" > /dev/null; }
  ;;
*)
  echo "application.sh: unknown application $app (lammps, gromacs, hpcc, nwchem, openfoam, numpy, bwa, povray, archive, sweep, transcode, build, chess, database, compress, crypto, image, octave, rstats)" >&2
  exit 2
  ;;
esac

runs=0 fast_failures=0
while [ "$(left)" -gt 2 ]; do
  # A run cut at the deadline: the suite's jobs last what the suite asks, not what the input does.
  began=$(date +%s)
  if timeout --signal=TERM --kill-after=5 "$(left)" bash -c "$(declare -f run left); $(declare -p mpi ranks deadline ${workers+workers}); run"; then
    fast_failures=0
  elif [ $(( $(date +%s) - began )) -lt 2 ]; then
    # An application that cannot run at all would otherwise be started again and again for the
    # whole job, which would then be labelled as if it had run.
    fast_failures=$((fast_failures + 1))
    if [ "$fast_failures" -ge 3 ]; then
      echo "application.sh: $app failed three times in a row within 2 s: it does not run here" >&2
      exit 1
    fi
  fi
  runs=$((runs + 1))
done
echo "application.sh: $app ran $runs time(s) in $seconds s"

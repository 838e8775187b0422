/**
 * AcaClaw's stage 2: each discipline's "essential packages" only — needed for the field, stable,
 * small (no 4 GB frameworks in the primary env). One or several are merged into the primary env,
 * never one env per discipline; R (r-base r-irkernel r-essentials) and the discipline's R packages
 * only when R is chosen. Everything else is installed on demand (the cascade).
 */
export interface Discipline {
  id: string;
  /** AcaClaw's package name for it (bioclaw, chemclaw, …). */
  bundle: string;
  label: string;
  packages: string[];
  rPackages: string[];
}

export const DISCIPLINES: readonly Discipline[] = [
  {
    id: "biology",
    bundle: "bioclaw",
    label: "Biology",
    packages: ["biopython", "scikit-bio"],
    rPackages: ["r-biocmanager"],
  },
  {
    id: "chemistry",
    bundle: "chemclaw",
    label: "Chemistry",
    packages: ["rdkit", "openbabel"],
    rPackages: [],
  },
  {
    id: "medicine",
    bundle: "medclaw",
    label: "Medicine",
    packages: ["lifelines", "pydicom"],
    rPackages: ["r-survival"],
  },
  {
    id: "general",
    bundle: "sciclaw",
    label: "General science",
    packages: ["sympy", "statsmodels"],
    rPackages: [],
  },
];

/** R in a conda env (AcaClaw's "Install R into conda env"). */
export const R_PACKAGES = ["r-base", "r-irkernel", "r-essentials"];

/** Stage 1: the primary env's core stack (sandbox/env/acaclaw.txt, which the image installs, lists the same). */
export const CORE_STACK = [
  "python=3.12",
  "numpy",
  "scipy",
  "pandas",
  "matplotlib",
  "jupyter",
  "ipykernel",
  "scikit-learn",
  "openpyxl",
];

export function disciplineById(id: string): Discipline | undefined {
  return DISCIPLINES.find((d) => d.id === id || d.bundle === id);
}

/** What adding these disciplines installs into the primary env (R packages only with R). */
export function disciplinePackages(ids: readonly string[], withR: boolean): string[] {
  const packages = new Set<string>();
  for (const id of ids) {
    const discipline = disciplineById(id);
    if (!discipline) continue;
    for (const name of discipline.packages) packages.add(name);
    if (withR) for (const name of [...R_PACKAGES, ...discipline.rPackages]) packages.add(name);
  }
  return [...packages];
}

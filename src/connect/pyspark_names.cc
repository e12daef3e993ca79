#include "connect/pyspark_names.h"

#include <map>

namespace sluice::connect {

namespace {

std::string WithApi(const std::map<std::string, std::string>& apis, const std::string& field) {
  auto it = apis.find(field);
  return it == apis.end() ? field : field + " (" + it->second + ")";
}

}  // namespace

std::string RelationWithApi(const std::string& field) {
  static const std::map<std::string, std::string> kApis = {
      {"sample", "DataFrame.sample"},
      {"catalog", "spark.catalog"},
      {"hint", "DataFrame.hint"},
      {"repartition", "DataFrame.repartition / coalesce"},
      {"repartition_by_expression", "DataFrame.repartition(cols) / repartitionByRange"},
      {"tail", "DataFrame.tail"},
      {"unpivot", "DataFrame.unpivot / melt"},
      {"to_schema", "DataFrame.to(schema)"},
      {"html_string", "DataFrame._repr_html_"},
      {"collect_metrics", "DataFrame.observe"},
      {"parse", "spark.read.json/csv of a DataFrame"},
      {"map_partitions", "DataFrame.mapInPandas / mapInArrow"},
      {"group_map", "GroupedData.applyInPandas"},
      {"co_group_map", "cogroup().applyInPandas"},
      {"apply_in_pandas_with_state", "GroupedData.applyInPandasWithState"},
      {"fill_na", "DataFrame.fillna / na.fill"},
      {"drop_na", "DataFrame.dropna / na.drop"},
      {"replace", "DataFrame.replace / na.replace"},
      {"summary", "DataFrame.summary"},
      {"describe", "DataFrame.describe"},
      {"crosstab", "DataFrame.crosstab"},
      {"cov", "DataFrame.cov"},
      {"corr", "DataFrame.corr"},
      {"approx_quantile", "DataFrame.approxQuantile"},
      {"freq_items", "DataFrame.freqItems"},
      {"sample_by", "DataFrame.sampleBy"},
      {"cached_remote_relation", "a DataFrame cached on the server (foreachBatch, checkpoint)"},
      {"cached_local_relation", "createDataFrame of data above the local relation threshold"},
      {"with_relations", "spark.sql with DataFrame arguments"},
      {"transpose", "DataFrame.transpose"},
      {"lateral_join", "DataFrame.lateralJoin"},
  };
  return WithApi(kApis, field);
}

std::string CommandWithApi(const std::string& field) {
  static const std::map<std::string, std::string> kApis = {
      {"write_operation", "DataFrame.write: save, saveAsTable, insertInto"},
      {"write_operation_v2", "DataFrame.writeTo"},
      {"register_function", "spark.udf.register"},
      {"register_table_function", "spark.udtf.register"},
      {"register_data_source", "spark.dataSource.register"},
      {"streaming_query_listener_bus_command", "spark.streams.addListener"},
      {"create_dataframe_view", "createOrReplaceTempView"},
      {"checkpoint_command", "DataFrame.checkpoint / localCheckpoint"},
      {"merge_into_table_command", "DataFrame.mergeInto"},
      {"remove_cached_remote_relation_command", "DataFrame.unpersist of a server-side DataFrame"},
      {"get_resources_command", "SparkContext.resources"},
      {"ml_command", "pyspark.ml"},
      {"execute_external_command", "spark.executeCommand"},
      {"pipeline_command", "Spark Declarative Pipelines"},
  };
  return WithApi(kApis, field);
}

}  // namespace sluice::connect
